import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sealing resumes over what earlier sealers left. Their batches could sort transaction ids as text ('1000'
 * before '999'): a batch across such a boundary linked records past its cursor (the next batch then failed
 * on them, on every tick) or moved the cursor past records it had not linked. The sealer now passes over
 * records that have a link; this moves the cursor back to just before the earliest record it passed without
 * linking (of a tenant that still exists: a purged tenant's chain key is gone), so the sealer chains those too.
 */
export class AuditSealResume1764800000000 implements MigrationInterface {
  name = 'AuditSealResume1764800000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      WITH missed AS (
        SELECT r.xid, r.id FROM audit_records r, audit_seal_state s
        WHERE (r.xid, r.id) <= (s.cursor_xid, s.cursor_id)
          AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = r.tenant_id)
          AND NOT EXISTS (SELECT 1 FROM audit_links l WHERE l.tenant_id = r.tenant_id AND l.record_id = r.id)
        ORDER BY r.xid, r.id LIMIT 1
      ), before AS (
        SELECT r.xid, r.id FROM audit_records r, missed m WHERE (r.xid, r.id) < (m.xid, m.id)
        ORDER BY r.xid DESC, r.id DESC LIMIT 1
      )
      UPDATE audit_seal_state SET
        cursor_xid = COALESCE((SELECT xid FROM before), '0'::xid8),
        cursor_id = COALESCE((SELECT id FROM before), '00000000-0000-0000-0000-000000000000'::uuid)
      WHERE EXISTS (SELECT 1 FROM missed)`);
  }

  public async down(): Promise<void> {
    // Nothing to undo: the cursor only moved back, over records the sealer passes over or chains.
  }
}
