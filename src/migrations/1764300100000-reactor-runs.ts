import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Asynchronous reactor runs (POST /reactors/{id}/react-async): a queue in the database, so a run waits out
 * a restart and one replica claims it (FOR UPDATE SKIP LOCKED). The prepared arguments and the result are
 * sealed under the tenant's data key; the purge job deletes a run 24 hours after it was asked for.
 */
export class ReactorRuns1764300100000 implements MigrationInterface {
  name = 'ReactorRuns1764300100000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE reactor_runs (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id uuid NOT NULL,
      reactor_id uuid NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
      request bytea,
      result bytea,
      created_by uuid,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      completed_at timestamptz,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    )`);
    await q.query(`CREATE INDEX reactor_runs_pending ON reactor_runs (created_at) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX reactor_runs_running ON reactor_runs (started_at) WHERE status = 'running'`);
    await q.query('CREATE INDEX reactor_runs_expires ON reactor_runs (expires_at)');
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE reactor_runs');
  }
}
