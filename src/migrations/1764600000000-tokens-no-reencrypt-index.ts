import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops `tokens_reencrypt` (tenant_id, data_key_version). Only the keys:reencrypt command read it, and it now
 * walks each tenant's tokens along the primary key instead (ReencryptionService); every token INSERT, and
 * every UPDATE of a token's data (the index's predicate), paid to keep it: one index entry per token written.
 */
export class TokensNoReencryptIndex1764600000000 implements MigrationInterface {
  name = 'TokensNoReencryptIndex1764600000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX tokens_reencrypt');
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE INDEX tokens_reencrypt ON tokens (tenant_id, data_key_version) WHERE data IS NOT NULL',
    );
  }
}
