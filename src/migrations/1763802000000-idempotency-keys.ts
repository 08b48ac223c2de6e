import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency keys (BT-IDEMPOTENCY-KEY): one row per tenant, caller and key while the first request runs
 * and for 24 hours after it succeeded. The key and the request's path and body are kept only as SHA-256
 * hashes; the response is sealed under the tenant's data key. `attempt` names the request that owns a
 * running row, so a request that took over a stale row is not overwritten by the one it replaced.
 */
export class IdempotencyKeys1763802000000 implements MigrationInterface {
  name = 'IdempotencyKeys1763802000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE idempotency_keys (
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      scope text NOT NULL,
      key_hash text NOT NULL,
      method text NOT NULL,
      path_hash text NOT NULL,
      body_hash text NOT NULL,
      state text NOT NULL CHECK (state IN ('running', 'done')),
      attempt uuid NOT NULL,
      response bytea,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, scope, key_hash)
    )`);
    await q.query('CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)');
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE idempotency_keys');
  }
}
