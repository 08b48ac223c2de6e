import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import request from 'supertest';
import { Checkpoint } from '../../src/audit/audit-chain';
import { AuditChain } from '../../src/audit/audit-chain.service';
import { AuditCheckpoints } from '../../src/audit/audit-checkpoints.service';
import { AuditRetention } from '../../src/audit/audit-retention.service';
import { auditExport } from '../../src/cli/audit-export';
import { auditVerify } from '../../src/cli/audit-verify';
import { CliError } from '../../src/cli/kit';
import { Clock } from '../../src/common/clock';
import { runCli } from '../support/audit';
import { TestClock } from '../support/test-clock';
import { TestContext, TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

/** What a CLI command wrote to stdout; it must succeed. */
async function cli(command: typeof auditVerify, args: string[], ctx: TestContext): Promise<string> {
  const { said, error } = await runCli(command, args, ctx);
  if (error !== undefined) {
    throw error as Error;
  }
  return said;
}

/** What audit:verify wrote to stdout; it must fail (exit code 1). */
async function failingVerify(args: string[], ctx: TestContext): Promise<string> {
  const { said, error } = await runCli(auditVerify, args, ctx);
  expect(error).toBeInstanceOf(CliError);
  return said;
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
    const all = (await cli(auditExport, ['--since', '2000-01-01', '--tenant', tenant.tenantId], ctx))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { tenant_id: string; created_at: string; hash: string | null });
    // The last line is the tenant's checkpoint, after its records.
    const [checkpoint] = await ctx.get(AuditCheckpoints).current(tenant.tenantId);
    expect(all.at(-1)).toEqual({ checkpoint });
    const lines = all.slice(0, -1);
    expect(lines.length).toBeGreaterThan(0);
    expect(new Set(lines.map((l) => l.tenant_id))).toEqual(new Set([tenant.tenantId]));
    const times = lines.map((l) => l.created_at);
    expect([...times].sort()).toEqual(times);
  });

  describe('its signed head, checkpoints kept outside the database, and a missing chain', () => {
    /** A tenant with `n` chained token records and its checkpoint, taken as audit:export gives it. */
    async function chained(
      name: string,
      n = 5,
    ): Promise<{ tenantId: string; checkpoint: Checkpoint; app: Awaited<ReturnType<typeof tokenApp>> }> {
      const t = await ctx.newTenant(name);
      const app = await tokenApp(ctx, t);
      for (let i = 0; i < n; i++) {
        await app.api.create({ type: 'token', data: `${name}${i}` }).expect(201);
      }
      await ctx.get(AuditChain).sealAll();
      const [checkpoint] = await ctx.get(AuditCheckpoints).current(t.tenantId);
      expect(await ctx.get(AuditChain).verify(t.tenantId)).toBeNull();
      return { tenantId: t.tenantId, checkpoint, app };
    }

    /** The attacker with database write access: drops the links (and records) past `keep`, rewinds the head. */
    async function cutAfter(tenantId: string, keep: number): Promise<void> {
      await ctx.dataSource.query(
        `WITH gone AS (DELETE FROM audit_links WHERE tenant_id = $1 AND seq > $2 RETURNING record_id)
         DELETE FROM audit_records r USING gone WHERE r.id = gone.record_id`,
        [tenantId, keep],
      );
      await ctx.dataSource.query(
        `UPDATE audit_chains c SET head_seq = l.seq, head_hash = l.hash FROM audit_links l
         WHERE c.tenant_id = $1 AND l.tenant_id = $1 AND l.seq = $2`,
        [tenantId, keep],
      );
    }

    it('refuses a head rewound after the newest records were deleted, and the sealer will not extend it', async () => {
      const { tenantId, checkpoint } = await chained('Rewound');
      const chain = ctx.get(AuditChain);
      await cutAfter(tenantId, 3);
      expect(await chain.verify(tenantId)).toMatchObject({
        seq: '3',
        reason: 'its head is not signed by this vault: the chain was cut, rewound or replaced',
      });
      expect(await ctx.get(AuditCheckpoints).check(checkpoint)).toBe(
        `the chain was cut: it ends at link 3, below the checkpoint at link ${checkpoint.seq}`,
      );
      // A new record for the tenant: the sealer stops rather than sign the rewound head.
      await ctx.dataSource.query(
        `INSERT INTO audit_records (tenant_id, id, created_at, actor_type, entity_type, operation, outcome, message)
         VALUES ($1, gen_random_uuid(), now(), 'system', 'tenant', 'test', 'success', 'after the cut')`,
        [tenantId],
      );
      await expect(chain.sealAll()).rejects.toThrow(
        `tenant ${tenantId} (link 3) is not signed by this vault`,
      );
      // Clearing the signature as well does not help.
      await ctx.dataSource.query('UPDATE audit_chains SET head_signature = NULL WHERE tenant_id = $1', [
        tenantId,
      ]);
      expect(await chain.verify(tenantId)).toMatchObject({
        reason: expect.stringContaining('its head is not signed'),
      });
      await ctx.dataSource.query('DELETE FROM audit_records WHERE tenant_id = $1', [tenantId]);
      await ctx.dataSource.query('DELETE FROM audit_links WHERE tenant_id = $1', [tenantId]);
      await ctx.dataSource.query('DELETE FROM audit_chains WHERE tenant_id = $1', [tenantId]);
    });

    it('reports a missing chain row while the tenant has chained records, links or not', async () => {
      const { tenantId } = await chained('Rowless', 3);
      const chain = ctx.get(AuditChain);
      await ctx.dataSource.query('DELETE FROM audit_chains WHERE tenant_id = $1', [tenantId]);
      expect(await chain.verifiable()).toContain(tenantId);
      expect(await chain.verify(tenantId)).toMatchObject({
        reason: expect.stringMatching(
          /^the chain is missing: \d+ chained record\(s\) or link\(s\) but no chain row$/,
        ),
      });
      await ctx.dataSource.query('DELETE FROM audit_links WHERE tenant_id = $1', [tenantId]);
      expect(await chain.verify(tenantId)).toMatchObject({
        reason: expect.stringContaining('the chain is missing'),
      });
      await ctx.dataSource.query('DELETE FROM audit_records WHERE tenant_id = $1', [tenantId]);
    });

    it('against a kept checkpoint, tells a wipe of the records, links and chain row', async () => {
      const { tenantId, checkpoint, app } = await chained('Wiped', 3);
      const checkpoints = ctx.get(AuditCheckpoints);
      expect(await checkpoints.check(checkpoint)).toBeNull();
      for (const table of ['audit_records', 'audit_links', 'audit_chains']) {
        await ctx.dataSource.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
      }
      // Without the checkpoint nothing is left to tell.
      expect(await ctx.get(AuditChain).verify(tenantId)).toBeNull();
      expect(await checkpoints.check(checkpoint)).toBe(
        `the chain is missing: no chain row, though a checkpoint at link ${checkpoint.seq} was signed ${checkpoint.signed_at}`,
      );
      // A chain begun again from link 1 does not hold the checkpoint's link either.
      for (let i = 0; i < 8; i++) {
        await app.api.create({ type: 'token', data: `again${i}` }).expect(201);
      }
      await ctx.get(AuditChain).sealAll();
      expect(await ctx.get(AuditChain).verify(tenantId)).toBeNull();
      expect(await checkpoints.check(checkpoint)).toBe(
        `link ${checkpoint.seq} differs from the checkpoint: the chain was rewritten`,
      );
    });

    it('a checkpoint holds on an untouched chain that grew past it; a forged one is refused', async () => {
      const { checkpoint, app } = await chained('Kept2', 4);
      const checkpoints = ctx.get(AuditCheckpoints);
      await app.api.create({ type: 'token', data: 'later' }).expect(201);
      await ctx.get(AuditChain).sealAll();
      expect(await checkpoints.check(checkpoint)).toBeNull();
      expect(await checkpoints.check({ ...checkpoint, seq: '2' })).toBe(
        'the checkpoint is not signed by this vault',
      );
      expect(await checkpoints.check({ ...checkpoint, hash: 'f'.repeat(64) })).toBe(
        'the checkpoint is not signed by this vault',
      );
    });

    it('calls a purged tenant not verifiable, and its checkpoint broken', async () => {
      const { tenantId, checkpoint } = await chained('Purged', 1);
      await ctx.dataSource.query('DELETE FROM tenants WHERE id = $1', [tenantId]);
      expect(await ctx.get(AuditChain).verify(tenantId)).toMatchObject({
        purged: true,
        reason: 'the tenant was purged, and its chain key with it: its chain can no longer be verified',
      });
      expect(await ctx.get(AuditCheckpoints).check(checkpoint)).toBe(
        'the tenant no longer exists (purged, or its row deleted): its chain cannot be checked',
      );
      // The upgrade's one-time signing passes over it rather than fail.
      await ctx.dataSource.query('UPDATE audit_chains SET head_signature = NULL WHERE tenant_id = $1', [
        tenantId,
      ]);
      await ctx.dataSource.query('UPDATE audit_seal_state SET unsigned_heads = true');
      await ctx.get(AuditChain).sealAll();
    });

    it('signs the heads chained before the upgrade once, then takes an unsigned head for a breach', async () => {
      const { tenantId } = await chained('Legacy', 2);
      const chain = ctx.get(AuditChain);
      await ctx.dataSource.query(
        'UPDATE audit_chains SET head_signature = NULL, head_signed_at = NULL, head_key_id = NULL WHERE tenant_id = $1',
        [tenantId],
      );
      expect(await chain.verify(tenantId)).toMatchObject({
        reason: expect.stringContaining('is not signed'),
      });
      await ctx.dataSource.query('UPDATE audit_seal_state SET unsigned_heads = true');
      await chain.sealAll();
      expect(await chain.verify(tenantId)).toBeNull();
      const [{ unsigned }]: { unsigned: boolean }[] = await ctx.dataSource.query(
        'SELECT unsigned_heads AS unsigned FROM audit_seal_state',
      );
      expect(unsigned).toBe(false);
    });

    it('logs each new signed head once, at info level', async () => {
      const { tenantId, checkpoint } = await chained('Logged', 1);
      const checkpoints = ctx.get(AuditCheckpoints);
      // Spied rather than read from ctx.logs: a CLI command run before in this process replaces Nest's logger.
      const log = jest.spyOn(Logger.prototype, 'log');
      try {
        await checkpoints.logNew();
        const mine = (): unknown[][] =>
          log.mock.calls.filter(
            ([m]) => (m as { checkpoint?: Checkpoint }).checkpoint?.tenant_id === tenantId,
          );
        expect(mine()).toEqual([[{ checkpoint }, 'audit checkpoint']]);
        await checkpoints.logNew();
        expect(mine()).toHaveLength(1);
      } finally {
        log.mockRestore();
      }
    });

    onPostgres(
      'audit:verify fails with one line per attack, and passes with a checkpoint from audit:export',
      async () => {
        const good = await chained('Exported', 3);
        const dir = mkdtempSync(join(tmpdir(), 'tv-checkpoint-'));
        const exported = join(dir, 'export.jsonl');
        writeFileSync(
          exported,
          await cli(auditExport, ['--since', '2000-01-01', '--tenant', good.tenantId], ctx),
        );
        const verified = await cli(auditVerify, ['--tenant', good.tenantId, '--checkpoint', exported], ctx);
        expect(verified).toContain(`tenant ${good.tenantId}: ok`);

        const rewound = await chained('RewoundCli');
        await cutAfter(rewound.tenantId, 2);
        const rowless = await chained('RowlessCli', 2);
        await ctx.dataSource.query('DELETE FROM audit_chains WHERE tenant_id = $1', [rowless.tenantId]);
        const wiped = await chained('WipedCli', 2);
        for (const table of ['audit_records', 'audit_links', 'audit_chains']) {
          await ctx.dataSource.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [wiped.tenantId]);
        }
        const said = await failingVerify(
          ['--checkpoint', JSON.stringify({ checkpoint: wiped.checkpoint })],
          ctx,
        );
        expect(said).toContain(
          `tenant ${rewound.tenantId}: BROKEN at link 2: its head is not signed by this vault: the chain was cut, rewound or replaced`,
        );
        expect(said).toContain(`tenant ${rowless.tenantId}: BROKEN at link ?: the chain is missing`);
        expect(said).toContain(
          `tenant ${wiped.tenantId}: BROKEN against the checkpoint at link ${wiped.checkpoint.seq}: the chain is missing`,
        );
        expect(said).toContain(`tenant ${good.tenantId}: ok`);
        // The tenant purged by an earlier test: said, and not a failure by itself.
        expect(said).toMatch(/: not verifiable: the tenant was purged/);
        for (const t of [rewound, rowless]) {
          for (const table of ['audit_records', 'audit_links', 'audit_chains']) {
            await ctx.dataSource.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [t.tenantId]);
          }
        }
      },
    );
  });
});

describe('the signed head on a sealed vault', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('keeps its signed head and logs checkpoints without keys, and chains nothing until unsealed', async () => {
    const t = await ctx.newTenant('Sealed');
    const app = await tokenApp(ctx, t);
    await app.api.create({ type: 'token', data: 'before sealing' }).expect(201);
    await ctx.get(AuditChain).sealAll();
    const [checkpoint] = await ctx.get(AuditCheckpoints).current(t.tenantId);
    await ctx.restart({ VAULT_SEALED: 'true', VAULT_MASTER_KEYS: '' });
    await ctx.dataSource.query(
      `INSERT INTO audit_records (tenant_id, id, created_at, actor_type, entity_type, operation, outcome, message)
       VALUES ($1, gen_random_uuid(), now(), 'system', 'tenant', 'test', 'success', 'while sealed')`,
      [t.tenantId],
    );
    const log = jest.spyOn(Logger.prototype, 'log');
    try {
      expect(await ctx.get(AuditCheckpoints).logNew()).toBeGreaterThan(0);
      expect(log).toHaveBeenCalledWith({ checkpoint }, 'audit checkpoint');
    } finally {
      log.mockRestore();
    }
    // Sealing needs the tenant's key: it fails as a whole, and the head stays as it was signed.
    await expect(ctx.get(AuditChain).sealAll()).rejects.toThrow(/sealed/);
    expect(await ctx.get(AuditCheckpoints).current(t.tenantId)).toEqual([checkpoint]);
  });
});
