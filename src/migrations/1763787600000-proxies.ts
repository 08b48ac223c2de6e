import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Configured proxies. The key routes requests (and, with require_auth false, is the only credential): it
 * is looked up by its SHA-256 hash and kept sealed under the tenant's data key so reads can show it, like
 * the configuration, which holds partners' secrets.
 */
export class Proxies1763787600000 implements MigrationInterface {
  name = 'Proxies1763787600000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE proxies (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id uuid NOT NULL,
      name text NOT NULL,
      key_hash text NOT NULL UNIQUE,
      key bytea NOT NULL,
      destination_url text NOT NULL,
      request_transform_code text,
      response_transform_code text,
      application_id uuid,
      configuration bytea,
      require_auth boolean NOT NULL DEFAULT true,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_by uuid,
      modified_at timestamptz,
      PRIMARY KEY (tenant_id, id)
    )`);
    await q.query(`CREATE INDEX proxies_by_created ON proxies (tenant_id, created_at DESC, id)`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE proxies`);
  }
}
