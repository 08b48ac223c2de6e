import request from 'supertest';
import { AuditChain } from '../../src/audit/audit-chain.service';
import { auditVerify } from '../../src/cli/audit-verify';
import { AuditJobsService } from '../../src/jobs/audit-jobs.service';
import { runCli } from '../support/audit';
import { TestApplication, TestContext, TestTenant } from '../support/test-app';
import { tokenApp, TokensApi } from '../support/token-factory';

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

describe('two sealers and audit:verify at once, after a crash', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  /** What a crash between writing a batch's links and moving the head and the cursor leaves. */
  async function halfSealed(app: TestApplication & { api: TokensApi }): Promise<void> {
    for (let i = 0; i < 5; i++) {
      await app.api.create({ type: 'token', data: `before ${i}` }).expect(201);
    }
    await ctx.get(AuditChain).sealAll();
    const [head]: Record<string, unknown>[] = await ctx.dataSource.query(
      'SELECT * FROM audit_chains WHERE tenant_id = $1',
      [tenant.tenantId],
    );
    const [cursor]: Record<string, unknown>[] = await ctx.dataSource.query('SELECT * FROM audit_seal_state');
    for (let i = 0; i < 5; i++) {
      await app.api.create({ type: 'token', data: `lost ${i}` }).expect(201);
    }
    await ctx.get(AuditChain).sealAll();
    await ctx.dataSource.query(
      `UPDATE audit_chains SET head_seq = $2, head_hash = $3, head_signed_at = $4, head_key_id = $5,
           head_signature = $6 WHERE tenant_id = $1`,
      [
        tenant.tenantId,
        head.head_seq,
        head.head_hash,
        head.head_signed_at,
        head.head_key_id,
        head.head_signature,
      ],
    );
    await ctx.dataSource.query('UPDATE audit_seal_state SET cursor_xid = $1, cursor_id = $2', [
      cursor.cursor_xid,
      cursor.cursor_id,
    ]);
  }

  /** The tenant's links are 1..n over its n records, each following the one before, and verify passes. */
  async function expectOneChain(chain: AuditChain): Promise<void> {
    const links: { seq: string; prev_hash: string | null; hash: string }[] = await ctx.dataSource.query(
      'SELECT seq, prev_hash, hash FROM audit_links WHERE tenant_id = $1 ORDER BY seq',
      [tenant.tenantId],
    );
    const [{ n }]: { n: number }[] = await ctx.dataSource.query(
      'SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1',
      [tenant.tenantId],
    );
    expect(links.map((l) => Number(l.seq))).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    links.forEach((link, i) => expect(link.prev_hash).toBe(i === 0 ? null : links[i - 1].hash));
    expect(await chain.verify(tenant.tenantId)).toBeNull();
  }

  onPostgres('continue one chain from a half-sealed batch, and every verify passes meanwhile', async () => {
    const app = await tokenApp(ctx, tenant);
    await halfSealed(app);

    // Both replicas start afresh, as after the restart.
    await ctx.restart();
    const second = await ctx.secondInstance();
    const servers = [ctx.vault.app.getHttpServer(), second.app.getHttpServer()];
    const chains = [ctx.get(AuditChain), second.app.get(AuditChain)];
    const writes = Array.from({ length: 60 }, (_, i) =>
      request(servers[i % 2])
        .post('/tokens')
        .set('BT-API-KEY', app.key)
        .send({ type: 'token', data: `v${i}` }),
    );
    // Both replicas seal, again and again, while audit:verify (which seals too) runs three times.
    let verifying = true;
    const sealers = chains.map(async (chain) => {
      while (verifying) {
        await chain.sealAll({ wait: false });
      }
    });
    const verifies: { said: string; error: unknown }[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        verifies.push(await runCli(auditVerify, [], ctx));
      }
    } finally {
      verifying = false;
    }
    const answers = await Promise.all(writes);
    await Promise.all(sealers);
    expect(answers.map((a) => a.status)).toEqual(Array(60).fill(201));
    for (const { said, error } of verifies) {
      expect(error).toBeUndefined();
      expect(said).toContain(`tenant ${tenant.tenantId}: ok`);
    }

    await Promise.all(chains.map((c) => c.sealAll()));
    await expectOneChain(chains[1]);
    expect((await runCli(auditVerify, [], ctx)).error).toBeUndefined();
  });

  it('continue one chain when the job, retention and a direct seal run at once after a restart', async () => {
    const app = await tokenApp(ctx, tenant);
    await halfSealed(app);
    await ctx.restart();
    const jobs = ctx.get(AuditJobsService);
    const chain = ctx.get(AuditChain);
    const writes = Array.from({ length: 20 }, (_, i) =>
      request(ctx.vault.app.getHttpServer())
        .post('/tokens')
        .set('BT-API-KEY', app.key)
        .send({ type: 'token', data: `w${i}` }),
    );
    const breaches = await Promise.all([
      jobs.seal(),
      jobs.deleteExpired(),
      chain.sealAll(),
      chain.verify(tenant.tenantId),
      jobs.seal(),
      chain.sealAll({ wait: false }),
      chain.verify(tenant.tenantId),
    ]);
    expect(breaches.filter((b) => b !== undefined && typeof b !== 'number')).toEqual([null, null]);
    expect((await Promise.all(writes)).map((w) => w.status)).toEqual(Array(20).fill(201));
    await chain.sealAll();
    await expectOneChain(chain);
    expect(ctx.logs.filter((l) => l.includes('failed'))).toEqual([]);
  });
});
