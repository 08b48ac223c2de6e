import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An async run's result belongs to the application that started it (`created_by`), so every run has one:
 * a run without (none was ever written so) could be read by nobody and is dropped. The pending runs in
 * each tenant's order, for the fair claim that ranks them per tenant.
 */
export class ReactorRunsOwner1764700400000 implements MigrationInterface {
  name = 'ReactorRunsOwner1764700400000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query('DELETE FROM reactor_runs WHERE created_by IS NULL');
    await q.query('ALTER TABLE reactor_runs ALTER COLUMN created_by SET NOT NULL');
    await q.query(
      `CREATE INDEX reactor_runs_pending_by_tenant ON reactor_runs (tenant_id, created_at, id) WHERE status = 'pending'`,
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX reactor_runs_pending_by_tenant');
    await q.query('ALTER TABLE reactor_runs ALTER COLUMN created_by DROP NOT NULL');
  }
}
