import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1763769600000 implements MigrationInterface {
  name = 'Foundation1763769600000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE tenants (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      owner_id uuid,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE TABLE users (
      id uuid PRIMARY KEY,
      email text NOT NULL,
      first_name text,
      last_name text,
      picture text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`);
    await q.query(`CREATE TABLE tenant_members (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id uuid NOT NULL,
      user_id uuid NOT NULL REFERENCES users(id),
      role text NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'READ_ONLY')),
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_by uuid,
      modified_at timestamptz,
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, user_id)
    )`);
    await q.query(`CREATE TABLE applications (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id uuid NOT NULL,
      name text NOT NULL,
      type text NOT NULL CHECK (type IN ('private', 'public', 'management')),
      permissions jsonb NOT NULL DEFAULT '[]',
      rules jsonb NOT NULL DEFAULT '[]',
      key_hash text NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_by uuid,
      modified_at timestamptz,
      PRIMARY KEY (tenant_id, id)
    )`);
    await q.query(`CREATE UNIQUE INDEX applications_key_hash_key ON applications (key_hash)`);
    await q.query(
      `CREATE INDEX applications_tenant_created ON applications (tenant_id, created_at DESC, id)`,
    );
    await q.query(`CREATE TABLE tenant_keys (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('data', 'hmac')),
      version int NOT NULL,
      master_key_id text NOT NULL,
      wrapped text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, kind, version)
    )`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE tenant_keys');
    await q.query('DROP TABLE applications');
    await q.query('DROP TABLE tenant_members');
    await q.query('DROP TABLE users');
    await q.query('DROP TABLE tenants');
  }
}
