import { MigrationInterface, QueryRunner } from 'typeorm';

export class Tokens1763773200000 implements MigrationInterface {
  name = 'Tokens1763773200000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE tokens (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id text NOT NULL,
      type text NOT NULL,
      data bytea,
      data_key_version int,
      mask jsonb,
      fingerprint text,
      fingerprint_expression text,
      containers text[] NOT NULL,
      metadata jsonb,
      metadata_ci jsonb,
      search_indexes jsonb,
      deduplicate_token boolean,
      expires_at timestamptz,
      created_by uuid,
      created_at timestamptz NOT NULL,
      modified_by uuid,
      modified_at timestamptz,
      deleted_at timestamptz,
      PRIMARY KEY (tenant_id, id)
    )`);
    await q.query(
      `CREATE INDEX tokens_live_by_created ON tokens (tenant_id, created_at DESC, id) WHERE deleted_at IS NULL`,
    );
    await q.query(
      `CREATE INDEX tokens_live_by_fingerprint ON tokens (tenant_id, type, fingerprint) WHERE deleted_at IS NULL`,
    );
    await q.query(
      `CREATE INDEX tokens_live_metadata ON tokens USING gin (metadata_ci jsonb_path_ops) WHERE deleted_at IS NULL`,
    );
    await q.query(
      `CREATE INDEX tokens_reencrypt ON tokens (tenant_id, data_key_version) WHERE data IS NOT NULL`,
    );
    await q.query(`CREATE TABLE token_search_indexes (
      tenant_id uuid NOT NULL,
      hash text NOT NULL,
      token_id text NOT NULL,
      PRIMARY KEY (tenant_id, hash, token_id),
      FOREIGN KEY (tenant_id, token_id) REFERENCES tokens (tenant_id, id) ON DELETE CASCADE
    )`);
    await q.query(`CREATE INDEX token_search_indexes_token ON token_search_indexes (tenant_id, token_id)`);
    await q.query(
      `CREATE INDEX tokens_live_expiry ON tokens (expires_at) WHERE deleted_at IS NULL AND expires_at IS NOT NULL`,
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE token_search_indexes');
    await q.query('DROP TABLE tokens');
  }
}
