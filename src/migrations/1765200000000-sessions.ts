import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sessions (src/sessions/): created by a public application's page, authorized once by a private
 * application (its permissions and rules), short-lived. The session key and the nonce are stored only as
 * their SHA-256; a session goes with either application and is purged once expired.
 */
export class Sessions1765200000000 implements MigrationInterface {
  name = 'Sessions1765200000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE sessions (
      tenant_id uuid NOT NULL,
      id uuid NOT NULL,
      key_hash text NOT NULL,
      nonce_hash text NOT NULL,
      application_id uuid NOT NULL,
      authorized_by uuid,
      permissions jsonb,
      rules jsonb,
      created_at timestamptz NOT NULL,
      authorized_at timestamptz,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, application_id) REFERENCES applications (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, authorized_by) REFERENCES applications (tenant_id, id) ON DELETE CASCADE
    )`);
    await q.query('CREATE UNIQUE INDEX sessions_key_hash ON sessions (key_hash)');
    await q.query('CREATE UNIQUE INDEX sessions_nonce_hash ON sessions (tenant_id, nonce_hash)');
    await q.query('CREATE INDEX sessions_expires_at ON sessions (expires_at)');
    await q.query('CREATE INDEX sessions_authorized_by ON sessions (tenant_id, authorized_by)');
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE sessions');
  }
}
