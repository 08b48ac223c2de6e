import { MigrationInterface, QueryRunner } from 'typeorm';

/** Tenant invitations: the acceptance secret is stored only as its SHA-256 hash. */
export class Invitations1763784000000 implements MigrationInterface {
  name = 'Invitations1763784000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE tenant_invitations (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id uuid NOT NULL,
      email text NOT NULL,
      status text NOT NULL CHECK (status IN ('PENDING', 'EXPIRED')),
      secret_hash text NOT NULL,
      expires_at timestamptz NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_by uuid,
      modified_at timestamptz,
      PRIMARY KEY (tenant_id, id)
    )`);
    await q.query(`CREATE UNIQUE INDEX tenant_invitations_secret ON tenant_invitations (secret_hash)`);
    // One invitation per address and tenant: a second one while the first is pending is a 409.
    await q.query(
      `CREATE UNIQUE INDEX tenant_invitations_email ON tenant_invitations (tenant_id, lower(email))`,
    );
    await q.query(
      `CREATE INDEX tenant_invitations_due ON tenant_invitations (expires_at) WHERE status = 'PENDING'`,
    );
    await q.query(
      `CREATE INDEX tenant_invitations_by_created ON tenant_invitations (tenant_id, created_at DESC, id)`,
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE tenant_invitations');
  }
}
