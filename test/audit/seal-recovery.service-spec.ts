import { Logger } from '@nestjs/common';
import { AuditChain } from '../../src/audit/audit-chain.service';
import { AuditSealResume1764800000000 } from '../../src/migrations/1764800000000-audit-seal-resume';
import { testConfig } from '../support/test-app';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';
import { auditServices, AuditServices } from './audit-services';

const INSERT_RECORD = `INSERT INTO audit_records
  (tenant_id, id, created_at, actor_type, entity_type, operation, outcome, message, xid)
  VALUES ($1, gen_random_uuid(), now(), 'system', 'tenant', 'test', 'success', $2, COALESCE($3::xid8, pg_current_xact_id()))`;

/**
 * Whatever an interrupted sealer, a crash or an earlier release left in the database, the next seal continues
 * the chain and verification passes. Each state is made directly in the database.
 */
describe('sealing resumes from any state a crash leaves', () => {
  const config = testConfig();
  let db: TestDataSource;
  let audit: AuditServices;
  beforeAll(async () => {
    db = await openTestDataSource();
    audit = await auditServices(db, config);
  });
  afterAll(async () => {
    audit.close();
    await db.close();
  });

  const chain = (): AuditChain => audit.chain;

  /** The audit services of a new process on the same database: nothing of the earlier one's state remains. */
  async function restart(): Promise<void> {
    audit.close();
    audit = await auditServices(db, config);
  }

  async function records(tenantId: string, n: number, xid: string | null = null): Promise<void> {
    for (let i = 0; i < n; i++) {
      await db.dataSource.query(INSERT_RECORD, [tenantId, `record ${i}`, xid]);
    }
  }

  /** The tenant's links are 1..n, one per record, and every record has one; the chain verifies. */
  async function expectWhole(tenantId: string): Promise<void> {
    const [{ records: n, links, seqs, top }]: {
      records: number;
      links: number;
      seqs: number;
      top: string | null;
    }[] = await db.dataSource.query(
      `SELECT (SELECT count(*)::int FROM audit_records WHERE tenant_id = $1) AS records,
         (SELECT count(DISTINCT record_id)::int FROM audit_links WHERE tenant_id = $1) AS links,
         (SELECT count(*)::int FROM audit_links WHERE tenant_id = $1) AS seqs,
         (SELECT max(seq)::text FROM audit_links WHERE tenant_id = $1) AS top`,
      [tenantId],
    );
    expect({ links, seqs, top }).toEqual({ links: n, seqs: n, top: String(n) });
    expect(await chain().verify(tenantId)).toBeNull();
  }

  async function cursor(): Promise<{ xid: string; id: string }> {
    const [row]: { xid: string; id: string }[] = await db.dataSource.query(
      'SELECT cursor_xid::text AS xid, cursor_id AS id FROM audit_seal_state',
    );
    return row;
  }

  async function setCursor(at: { xid: string; id: string }): Promise<void> {
    await db.dataSource.query('UPDATE audit_seal_state SET cursor_xid = $1::xid8, cursor_id = $2', [
      at.xid,
      at.id,
    ]);
  }

  /**
   * Waits until the tenant's records are old enough to seal: transaction ids are the server's, so on
   * PostgreSQL a transaction of another test file's database holds them back as it would any writer's.
   */
  async function sealable(tenantId: string): Promise<void> {
    for (const until = Date.now() + 30_000; Date.now() < until;) {
      const [{ ready }]: { ready: boolean }[] = await db.dataSource.query(
        `SELECT coalesce(bool_and(xid < pg_snapshot_xmin(pg_current_snapshot())), true) AS ready
         FROM audit_records WHERE tenant_id = $1`,
        [tenantId],
      );
      if (ready) {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the records did not become sealable within 30 s');
  }

  it('passes over records already linked past its cursor (links written, the cursor not moved)', async () => {
    const tenantId = await audit.newTenant('LinkedAhead');
    await chain().sealAll();
    const before = await cursor();
    await records(tenantId, 7);
    await chain().sealAll();
    await setCursor(before);
    await records(tenantId, 3);
    await chain().sealAll();
    await expectWhole(tenantId);
  });

  it('takes links written past the head into it (a batch whose head and cursor were not moved)', async () => {
    const tenantId = await audit.newTenant('HalfSealed');
    await records(tenantId, 4);
    await chain().sealAll();
    const before = await cursor();
    const [head]: Record<string, unknown>[] = await db.dataSource.query(
      'SELECT * FROM audit_chains WHERE tenant_id = $1',
      [tenantId],
    );
    await records(tenantId, 6);
    await chain().sealAll();
    const rewind = async (): Promise<void> => {
      await setCursor(before);
      await db.dataSource.query(
        `UPDATE audit_chains SET head_seq = $2, head_hash = $3, head_signed_at = $4, head_key_id = $5,
           head_signature = $6 WHERE tenant_id = $1`,
        [tenantId, head.head_seq, head.head_hash, head.head_signed_at, head.head_key_id, head.head_signature],
      );
    };
    // With a new record of the tenant: the batch continues after the links past the head.
    await rewind();
    await records(tenantId, 2);
    await chain().sealAll();
    await expectWhole(tenantId);
    // With nothing new after a restart: the first seal moves the head over them all the same.
    await rewind();
    await restart();
    await chain().sealAll();
    await expectWhole(tenantId);
  });

  it('chains records in transaction order across a power of ten, each once', async () => {
    const tenantId = await audit.newTenant('Digits');
    await chain().sealAll();
    const after = await cursor();
    // Transaction ids 99 and 100 sort the other way round as text; every later record is linked already.
    await setCursor({ xid: '98', id: 'ffffffff-ffff-ffff-ffff-ffffffffffff' });
    await records(tenantId, 400, '99');
    await records(tenantId, 300, '100');
    await chain().sealAll();
    await expectWhole(tenantId);
    const order: { xid: string }[] = await db.dataSource.query(
      `SELECT l.record_xid::text AS xid FROM audit_links l WHERE l.tenant_id = $1 ORDER BY l.seq`,
      [tenantId],
    );
    expect(order.map((o) => o.xid)).toEqual([...Array(400).fill('99'), ...Array(300).fill('100')]);
    await setCursor(after);
  });

  it('the upgrade moves the cursor back over records an earlier sealer passed without linking', async () => {
    const tenantId = await audit.newTenant('Skipped');
    await records(tenantId, 3);
    await chain().sealAll();
    // Records behind the cursor with no link, as a batch sorted as text could leave them.
    await records(tenantId, 2, '3');
    await records(tenantId, 2);
    expect(await chain().verify(tenantId)).toMatchObject({
      reason: expect.stringContaining('in no link of the chain'),
    });
    const runner = db.dataSource.createQueryRunner();
    try {
      await new AuditSealResume1764800000000().up(runner);
    } finally {
      await runner.release();
    }
    await chain().sealAll();
    await expectWhole(tenantId);
  });

  it('a failing seal logs its SQLSTATE and the record it stopped at, and the next one continues', async () => {
    const tenantId = await audit.newTenant('Refused');
    await chain().sealAll();
    await records(tenantId, 2);
    // The scheduled seal does not wait for writers: it must find these records to fail on them.
    await sealable(tenantId);
    const [first]: { id: string }[] = await db.dataSource.query(
      'SELECT id FROM audit_records WHERE tenant_id = $1 ORDER BY xid, id LIMIT 1',
      [tenantId],
    );
    await db.dataSource.query(`CREATE FUNCTION refuse_links() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'no room' USING ERRCODE = '53100'; END $$`);
    await db.dataSource.query(
      'CREATE TRIGGER refuse_links BEFORE INSERT ON audit_links FOR EACH ROW EXECUTE FUNCTION refuse_links()',
    );
    const logger = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    let logged: unknown[][] = [];
    try {
      await audit.jobs.seal();
    } finally {
      logged = [...logger.mock.calls];
      logger.mockRestore();
      await db.dataSource.query('DROP TRIGGER refuse_links ON audit_links');
      await db.dataSource.query('DROP FUNCTION refuse_links()');
    }
    const line = logged.find((args) => args[1] === 'audit-seal failed');
    expect(line?.[0]).toMatchObject({
      job: 'audit-seal',
      err: { type: 'QueryFailedError', code: '53100' },
      stoppedAt: { tenantId, recordId: first.id },
    });
    expect(JSON.stringify(line)).not.toContain('no room');
    await audit.jobs.seal();
    await expectWhole(tenantId);
  });

  it('a shutdown lets a running seal end its batch instead of failing it, and the next start chains the rest', async () => {
    const tenantId = await audit.newTenant('Restarted');
    await db.dataSource.query(
      `INSERT INTO audit_records (tenant_id, id, created_at, actor_type, entity_type, operation, outcome, message)
       SELECT $1, gen_random_uuid(), now(), 'system', 'tenant', 'test', 'success', 'backlog ' || g
       FROM generate_series(1, 3000) g`,
      [tenantId],
    );
    let settled = false;
    const sealing = chain()
      .sealAll({ wait: false })
      .finally(() => {
        settled = true;
      });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // What closing the app runs before the database closes: the running batch has ended by then.
    await chain().beforeApplicationShutdown();
    expect(settled).toBe(true);
    await restart();
    await expect(sealing).resolves.toBeLessThan(3000);
    await chain().sealAll();
    await expectWhole(tenantId);
  });
});
