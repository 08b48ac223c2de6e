import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit trail (src/audit/): one row per security-relevant action, written in the transaction of the
 * action. `seq`, `prev_hash` and `hash` are filled by the sealer, which chains each tenant's records in
 * order under a lock on the tenant's `audit_chains` row; `audit_chains` also keeps the signed anchor the
 * retention job leaves behind when it deletes the oldest records. Failed authentications have no tenant:
 * they are counted per key prefix and hour in `audit_auth_failures`, never storing the presented key.
 */
export class Audit1764000000000 implements MigrationInterface {
  name = 'Audit1764000000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE audit_records (
      tenant_id uuid NOT NULL,
      id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      actor_id uuid,
      actor_type text NOT NULL,
      entity_type text NOT NULL,
      entity_id text,
      operation text NOT NULL,
      outcome text NOT NULL,
      message text NOT NULL,
      request_id text,
      remote_address text,
      user_agent text,
      seq bigint,
      prev_hash text,
      hash text,
      key_id text,
      PRIMARY KEY (tenant_id, id)
    )`);
    await q.query('CREATE UNIQUE INDEX audit_records_seq ON audit_records (tenant_id, seq)');
    await q.query('CREATE INDEX audit_records_created ON audit_records (tenant_id, created_at DESC, id)');
    await q.query(
      'CREATE INDEX audit_records_entity ON audit_records (tenant_id, entity_type, entity_id, created_at DESC)',
    );
    await q.query(
      'CREATE INDEX audit_records_unsealed ON audit_records (tenant_id, created_at, id) WHERE seq IS NULL',
    );
    await q.query(`CREATE TABLE audit_chains (
      tenant_id uuid PRIMARY KEY,
      head_seq bigint NOT NULL DEFAULT 0,
      head_hash text,
      anchor_seq bigint NOT NULL DEFAULT 0,
      anchor_hash text,
      anchor_key_id text,
      anchor_signature text
    )`);
    await q.query(`CREATE TABLE audit_auth_failures (
      key_prefix text NOT NULL,
      hour timestamptz NOT NULL,
      attempts integer NOT NULL,
      last_at timestamptz NOT NULL,
      PRIMARY KEY (key_prefix, hour)
    )`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE audit_auth_failures');
    await q.query('DROP TABLE audit_chains');
    await q.query('DROP TABLE audit_records');
  }
}
