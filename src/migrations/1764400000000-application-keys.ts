import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Several keys per application (rotation without downtime): each key is a row with its own version, looked
 * up by the SHA-256 of the key. The one key every application had moves here as version 1.
 */
export class ApplicationKeys1764400000000 implements MigrationInterface {
  name = 'ApplicationKeys1764400000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE application_keys (
      tenant_id uuid NOT NULL,
      id uuid NOT NULL,
      application_id uuid NOT NULL,
      version int NOT NULL,
      key_hash text NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, application_id, version),
      FOREIGN KEY (tenant_id, application_id) REFERENCES applications (tenant_id, id) ON DELETE CASCADE
    )`);
    await q.query('CREATE UNIQUE INDEX application_keys_key_hash ON application_keys (key_hash)');
    await q.query(`INSERT INTO application_keys (tenant_id, id, application_id, version, key_hash, created_by, created_at)
      SELECT tenant_id, gen_random_uuid(), id, 1, key_hash, created_by, created_at FROM applications`);
    await q.query('ALTER TABLE applications DROP COLUMN key_hash');
    // The last version issued, so versions keep rising even after the newest key is deleted.
    await q.query('ALTER TABLE applications ADD COLUMN key_version int NOT NULL DEFAULT 1');
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE applications DROP COLUMN key_version');
    await q.query('ALTER TABLE applications ADD COLUMN key_hash text');
    await q.query(`UPDATE applications a SET key_hash = k.key_hash FROM (
        SELECT DISTINCT ON (tenant_id, application_id) tenant_id, application_id, key_hash
        FROM application_keys ORDER BY tenant_id, application_id, version DESC
      ) k WHERE k.tenant_id = a.tenant_id AND k.application_id = a.id`);
    await q.query(`UPDATE applications SET key_hash = 'revoked:' || id WHERE key_hash IS NULL`);
    await q.query('ALTER TABLE applications ALTER COLUMN key_hash SET NOT NULL');
    await q.query('CREATE UNIQUE INDEX applications_key_hash_key ON applications (key_hash)');
    await q.query('DROP TABLE application_keys');
  }
}
