import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Audit records become insert-only. The chain's links (seq, prev_hash, hash, key_id) move from columns of
 * `audit_records`, which the sealer filled by UPDATE, to the narrow `audit_links` table, which it appends to.
 * The UPDATE touched an indexed column, so it could never be a heap-only update: every record cost a second
 * wide tuple, index entries in every index and vacuum work, all of it on the database the requests wait for.
 *
 * What is not yet chained is found by `xid`, the id of the transaction that wrote the record: the sealer
 * chains, in (xid, id) order (the new primary key), only records of transactions older than every one still
 * running (pg_snapshot_xmin), so no record can commit behind its cursor (`audit_seal_state`) and be skipped.
 */
export class AuditLinks1764500000000 implements MigrationInterface {
  name = 'AuditLinks1764500000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE audit_links (
      tenant_id uuid NOT NULL,
      seq bigint NOT NULL,
      record_xid xid8 NOT NULL,
      record_id uuid NOT NULL,
      prev_hash text,
      hash text NOT NULL,
      key_id text NOT NULL,
      PRIMARY KEY (tenant_id, seq)
    )`);
    await q.query('CREATE UNIQUE INDEX audit_links_record ON audit_links (tenant_id, record_id)');
    // Chained records get xid 0, behind the sealer's first cursor; records still waiting get this
    // migration's transaction, chained once it has committed.
    await q.query('ALTER TABLE audit_records ADD COLUMN xid xid8');
    await q.query(
      "UPDATE audit_records SET xid = CASE WHEN seq IS NULL THEN pg_current_xact_id() ELSE '0'::xid8 END",
    );
    await q.query('ALTER TABLE audit_records ALTER COLUMN xid SET DEFAULT pg_current_xact_id()');
    await q.query('ALTER TABLE audit_records ALTER COLUMN xid SET NOT NULL');
    await q.query(`INSERT INTO audit_links (tenant_id, seq, record_xid, record_id, prev_hash, hash, key_id)
      SELECT tenant_id, seq, xid, id, prev_hash, hash, key_id FROM audit_records WHERE seq IS NOT NULL`);
    // The key is (xid, id): the sealer's order, and one index fewer on the hot path than a separate one.
    await q.query('ALTER TABLE audit_records DROP CONSTRAINT audit_records_pkey');
    await q.query('ALTER TABLE audit_records ADD PRIMARY KEY (xid, id)');
    await q.query('DROP INDEX audit_records_unsealed');
    await q.query('DROP INDEX audit_records_seq');
    await q.query(
      'ALTER TABLE audit_records DROP COLUMN seq, DROP COLUMN prev_hash, DROP COLUMN hash, DROP COLUMN key_id',
    );
    await q.query(`CREATE TABLE audit_seal_state (
      only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
      cursor_xid xid8 NOT NULL,
      cursor_id uuid NOT NULL
    )`);
    await q.query(
      "INSERT INTO audit_seal_state (cursor_xid, cursor_id) VALUES ('0', 'ffffffff-ffff-ffff-ffff-ffffffffffff')",
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(
      'ALTER TABLE audit_records ADD COLUMN seq bigint, ADD COLUMN prev_hash text, ADD COLUMN hash text, ADD COLUMN key_id text',
    );
    await q.query(`UPDATE audit_records r SET seq = l.seq, prev_hash = l.prev_hash, hash = l.hash, key_id = l.key_id
      FROM audit_links l WHERE l.tenant_id = r.tenant_id AND l.record_id = r.id`);
    await q.query('DROP TABLE audit_seal_state');
    await q.query('DROP TABLE audit_links');
    await q.query('ALTER TABLE audit_records DROP CONSTRAINT audit_records_pkey');
    await q.query('ALTER TABLE audit_records DROP COLUMN xid');
    await q.query('ALTER TABLE audit_records ADD PRIMARY KEY (tenant_id, id)');
    await q.query('CREATE UNIQUE INDEX audit_records_seq ON audit_records (tenant_id, seq)');
    await q.query(
      'CREATE INDEX audit_records_unsealed ON audit_records (tenant_id, created_at, id) WHERE seq IS NULL',
    );
  }
}
