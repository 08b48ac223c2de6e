import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `token_ids`: the tokens a record's action disclosed when it names more than one entity (a reaction's or a
 * proxied call's detokenization, a list, a search), so `GET /logs?entity_id=<token>` finds every use of a
 * token, not only its creation and direct reads. The same ids are in the record's message; both are covered
 * by the chain's hash. Only such records are indexed (partial GIN), so other records pay nothing for it.
 *
 * Built CONCURRENTLY, outside a transaction, so audit writes go on while it builds over an existing trail.
 */
export class AuditTokenIds1764700700000 implements MigrationInterface {
  name = 'AuditTokenIds1764700700000';
  transaction = false;

  public async up(q: QueryRunner): Promise<void> {
    const concurrently = q.isTransactionActive ? '' : 'CONCURRENTLY';
    await q.query('ALTER TABLE audit_records ADD COLUMN IF NOT EXISTS token_ids text[]');
    await q.query('SET statement_timeout = 0');
    try {
      // A build cut short leaves an invalid index behind: drop it and build again.
      await q.query(`DROP INDEX ${concurrently} IF EXISTS audit_records_token_ids`);
      await q.query(
        `CREATE INDEX ${concurrently} audit_records_token_ids ON audit_records USING gin (token_ids)
          WITH (fastupdate = off) WHERE token_ids IS NOT NULL`,
      );
    } finally {
      await q.query('RESET statement_timeout');
    }
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS audit_records_token_ids');
    await q.query('ALTER TABLE audit_records DROP COLUMN IF EXISTS token_ids');
  }
}
