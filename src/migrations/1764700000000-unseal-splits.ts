import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Shamir splits `keys:split` made of the master keys: per split, its threshold and the SHA-256 digest
 * of each share (by index), so a sealed vault refuses a share that is not one of its newest split's at
 * once. Digests only: a share, and so the key, cannot be rebuilt from them.
 */
export class UnsealSplits1764700000000 implements MigrationInterface {
  name = 'UnsealSplits1764700000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE unseal_splits (
      seq bigserial PRIMARY KEY,
      id text NOT NULL UNIQUE,
      threshold smallint NOT NULL CHECK (threshold >= 2),
      share_digests text[] NOT NULL CHECK (cardinality(share_digests) >= threshold),
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE unseal_splits');
  }
}
