import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each tenant's chain head gets a signature (HMAC with the tenant's chain key, which only a master key
 * unwraps): the sealer refuses to extend, and audit:verify reports, a head that was rewound or cut in the
 * database. Heads chained before this migration have none yet: `unsigned_heads` lets the sealer sign them
 * once, on its first run with the keys loaded; after that an unsigned head past link 0 is a breach.
 */
export class AuditHeadSignatures1764700500000 implements MigrationInterface {
  name = 'AuditHeadSignatures1764700500000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(
      'ALTER TABLE audit_chains ADD COLUMN head_signed_at text, ADD COLUMN head_key_id text, ADD COLUMN head_signature text',
    );
    await q.query('ALTER TABLE audit_seal_state ADD COLUMN unsigned_heads boolean NOT NULL DEFAULT false');
    await q.query(
      'UPDATE audit_seal_state SET unsigned_heads = EXISTS (SELECT 1 FROM audit_chains WHERE head_seq > 0)',
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE audit_seal_state DROP COLUMN unsigned_heads');
    await q.query(
      'ALTER TABLE audit_chains DROP COLUMN head_signed_at, DROP COLUMN head_key_id, DROP COLUMN head_signature',
    );
  }
}
