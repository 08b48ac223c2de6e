import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reactor formulas (official ones have no tenant) and reactors. A reactor's configuration holds partners'
 * secrets, so it is stored sealed under the tenant's data key like token data.
 */
export class Reactors1763780400000 implements MigrationInterface {
  name = 'Reactors1763780400000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE reactor_formulas (
      id uuid PRIMARY KEY,
      tenant_id uuid REFERENCES tenants(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      type text NOT NULL CHECK (type IN ('official', 'private')),
      status text NOT NULL CHECK (status IN ('verified', 'coming_soon')),
      icon text,
      code text NOT NULL,
      configuration jsonb NOT NULL,
      request_parameters jsonb NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_by uuid,
      modified_at timestamptz,
      CHECK ((type = 'official') = (tenant_id IS NULL))
    )`);
    await q.query(
      `CREATE INDEX reactor_formulas_by_tenant ON reactor_formulas (tenant_id, created_at DESC, id)`,
    );
    await q.query(`CREATE TABLE reactors (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id uuid NOT NULL,
      name text NOT NULL,
      formula_id uuid NOT NULL REFERENCES reactor_formulas(id),
      application_id uuid,
      configuration bytea NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_by uuid,
      modified_at timestamptz,
      PRIMARY KEY (tenant_id, id)
    )`);
    await q.query(`CREATE INDEX reactors_by_created ON reactors (tenant_id, created_at DESC, id)`);
    await q.query(`CREATE INDEX reactors_by_formula ON reactors (formula_id)`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reactors`);
    await q.query(`DROP TABLE reactor_formulas`);
  }
}
