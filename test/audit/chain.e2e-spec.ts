import request from 'supertest';
import { AuditChain } from '../../src/audit/audit-chain.service';
import { AuditRetention } from '../../src/audit/audit-retention.service';
import { auditExport } from '../../src/cli/audit-export';
import { auditVerify } from '../../src/cli/audit-verify';
import { CliError } from '../../src/cli/kit';
import { Clock } from '../../src/common/clock';
import { TestClock } from '../support/test-clock';
import { TestContext, TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

/** Runs a CLI command as `npm run cli` would, collecting what it writes to stdout. */
async function cli(command: typeof auditVerify, args: string[], ctx: TestContext): Promise<string> {
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    // The command opens the test's own database, as `npm run cli` would with DATABASE_URL pointing at it.
    const url = (ctx.database.options as { url: string }).url;
    await command.run(args, { ...ctx.config, databaseUrl: url, databaseListenUrl: url, logLevel: 'silent' });
  } finally {
    spy.mockRestore();
  }
  return lines.join('');
}

describe('the per-tenant hash chain of audit records', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  const clock = new TestClock();
  beforeAll(async () => {
    ctx = await TestContext.create({ overrides: [{ provide: Clock, useValue: clock }] });
    tenant = await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  async function links(tenantId: string): Promise<{ seq: string; prev_hash: string | null; hash: string }[]> {
    return ctx.dataSource.query(
      'SELECT seq, prev_hash, hash FROM audit_links WHERE tenant_id = $1 ORDER BY seq',
      [tenantId],
    );
  }

  onPostgres('has no forks and no lost links with two replicas writing and sealing at once', async () => {
    const second = await ctx.secondInstance();
    const app = await tokenApp(ctx, tenant);
    const servers = [ctx.vault.app.getHttpServer(), second.app.getHttpServer()];
    const chains = [ctx.get(AuditChain), second.app.get(AuditChain)];
    const writes = Array.from({ length: 60 }, (_, i) =>
      request(servers[i % 2])
        .post('/tokens')
        .set('BT-API-KEY', app.key)
        .send({ type: 'token', data: `v${i}` }),
    );
    const seals = Array.from({ length: 12 }, (_, i) => chains[i % 2].sealAll());
    const answers = await Promise.all(writes);
    await Promise.all(seals);
    expect(answers.map((a) => a.status)).toEqual(Array(60).fill(201));
    await Promise.all(chains.map((c) => c.sealAll()));

    const chain = await links(tenant.tenantId);
    const [{ n }]: { n: number }[] = await ctx.dataSource.query(
      'SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1',
      [tenant.tenantId],
    );
    expect(chain).toHaveLength(n);
    expect(chain.map((l) => Number(l.seq))).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    chain.forEach((link, i) => expect(link.prev_hash).toBe(i === 0 ? null : chain[i - 1].hash));
    expect(await chains[1].verify(tenant.tenantId)).toBeNull();
  });

  onPostgres('audit:verify passes untouched and names the edited row', async () => {
    const other = await ctx.newTenant('Other');
    const app = await tokenApp(ctx, other);
    for (let i = 0; i < 6; i++) {
      await app.api.create({ type: 'token', data: `w${i}` }).expect(201);
    }
    expect(await cli(auditVerify, ['--tenant', other.tenantId], ctx)).toContain(
      `tenant ${other.tenantId}: ok`,
    );
    const [edited]: { id: string }[] = await ctx.dataSource.query(
      'SELECT record_id AS id FROM audit_links WHERE tenant_id = $1 AND seq = 4',
      [other.tenantId],
    );
    await ctx.dataSource.query("UPDATE audit_records SET message = 'Token read (reveal)' WHERE id = $1", [
      edited.id,
    ]);
    let said = '';
    await expect(
      cli(auditVerify, [], ctx).catch((err: unknown) => {
        said = String((err as Error).message);
        throw err;
      }),
    ).rejects.toBeInstanceOf(CliError);
    expect(said).toContain('1 of');
    const report = await ctx.get(AuditChain).verify(other.tenantId);
    expect(report).toMatchObject({ seq: '4', recordId: edited.id });
    expect(await ctx.get(AuditChain).verify(tenant.tenantId)).toBeNull();
  });

  onPostgres('chains a record whose transaction commits after a later one, not skipping it', async () => {
    const late = await ctx.newTenant('Late');
    const app = await tokenApp(ctx, late);
    const chain = ctx.get(AuditChain);
    await chain.sealAll();
    // A write that began first and commits last: its record has the older transaction id.
    const runner = ctx.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await runner.query(
        `INSERT INTO audit_records (tenant_id, id, created_at, actor_type, entity_type, operation, outcome, message)
         VALUES ($1, gen_random_uuid(), now(), 'system', 'tenant', 'test', 'success', 'begun first')`,
        [late.tenantId],
      );
      await app.api.create({ type: 'token', data: 'committed first' }).expect(201);
      // The open transaction holds the sealer back: nothing of either can be chained yet.
      await chain.sealAll({ wait: false });
      expect(await links(late.tenantId)).toEqual([]);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    await chain.sealAll();
    const [{ n }]: { n: number }[] = await ctx.dataSource.query(
      'SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1',
      [late.tenantId],
    );
    expect(await links(late.tenantId)).toHaveLength(n);
    expect(await chain.verify(late.tenantId)).toBeNull();
  });

  it('names a chained record that was deleted, and a deleted link', async () => {
    const gone = await ctx.newTenant('Gone');
    const app = await tokenApp(ctx, gone);
    for (let i = 0; i < 4; i++) {
      await app.api.create({ type: 'token', data: `g${i}` }).expect(201);
    }
    const chain = ctx.get(AuditChain);
    await chain.sealAll();
    expect(await chain.verify(gone.tenantId)).toBeNull();
    const [second]: { record_id: string }[] = await ctx.dataSource.query(
      'SELECT record_id FROM audit_links WHERE tenant_id = $1 AND seq = 2',
      [gone.tenantId],
    );
    await ctx.dataSource.query('DELETE FROM audit_records WHERE tenant_id = $1 AND id = $2', [
      gone.tenantId,
      second.record_id,
    ]);
    expect(await chain.verify(gone.tenantId)).toMatchObject({
      seq: '2',
      recordId: second.record_id,
      reason: 'its record is missing',
    });
    await ctx.dataSource.query('DELETE FROM audit_links WHERE tenant_id = $1 AND seq = 2', [gone.tenantId]);
    expect(await chain.verify(gone.tenantId)).toMatchObject({ seq: '2', reason: 'link 2 is missing' });
  });

  it('retention deletes old records in batches and what remains still verifies from the signed anchor', async () => {
    const kept = await ctx.newTenant('Kept');
    const app = await tokenApp(ctx, kept);
    const now = Date.now();
    clock.set(now - 400 * 86_400_000);
    for (let i = 0; i < 5; i++) {
      await app.api.create({ type: 'token', data: `old${i}` }).expect(201);
    }
    clock.set(now);
    for (let i = 0; i < 3; i++) {
      await app.api.create({ type: 'token', data: `new${i}` }).expect(201);
    }
    const chain = ctx.get(AuditChain);
    await chain.sealAll();
    const deleted = await ctx.get(AuditRetention).deleteExpired(new Date(now), 2);
    expect(deleted).toBeGreaterThanOrEqual(5);
    const left = await links(kept.tenantId);
    expect(left.map((l) => l.seq)).toEqual(['6', '7', '8']);
    expect(await chain.verify(kept.tenantId)).toBeNull();

    await ctx.dataSource.query('UPDATE audit_chains SET anchor_seq = 4 WHERE tenant_id = $1', [
      kept.tenantId,
    ]);
    expect(await chain.verify(kept.tenantId)).toMatchObject({ reason: expect.stringContaining('anchor') });
    clock.reset();
  });

  it('audit:export writes JSON Lines since a date', async () => {
    if (!process.env.DATABASE_URL) {
      // The command opens the database itself: a second process on the embedded one is refused.
      const rows = [];
      for await (const r of ctx.get(AuditRetention).export(new Date(0))) {
        rows.push(r);
      }
      expect(rows.length).toBeGreaterThan(0);
      return;
    }
    const lines = (await cli(auditExport, ['--since', '2000-01-01', '--tenant', tenant.tenantId], ctx))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { tenant_id: string; created_at: string; hash: string | null });
    expect(lines.length).toBeGreaterThan(0);
    expect(new Set(lines.map((l) => l.tenant_id))).toEqual(new Set([tenant.tenantId]));
    const times = lines.map((l) => l.created_at);
    expect([...times].sort()).toEqual(times);
  });
});
