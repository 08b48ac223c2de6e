import request from 'supertest';
import type { VaultApp } from '../../src/app';
import { MetricsService } from '../../src/metrics/metrics.service';
import { InvitationExpiryService } from '../../src/jobs/invitation-expiry.service';
import { PurgeService } from '../../src/jobs/purge.service';
import { TestContext } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

// Two instances share one database only on PostgreSQL (the embedded database belongs to one process).
const onPostgres = process.env.DATABASE_URL ? it : it.skip;

async function purgedCount(metrics: MetricsService): Promise<number> {
  const metric = await metrics.purgedTokens.get();
  return metric.values.reduce((sum, v) => sum + v.value, 0);
}

describe('two instances running the purge and the invitation expiry at the same moment', () => {
  let ctx: TestContext;
  let replica: VaultApp | null = null;

  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => {
    await ctx.close();
  });

  onPostgres('purges every token once, expires every invitation once, and keeps serving reads', async () => {
    replica = await ctx.secondInstance();
    const tenant = await ctx.newTenant();
    const reader = await tokenApp(ctx, tenant, [], ['token:create', 'token:read']);
    const live: string[] = [];
    for (let i = 0; i < 5; i++) {
      live.push(
        (await reader.api.create({ type: 'token', data: `live ${i}` }).expect(201)).body.id as string,
      );
    }
    await ctx.dataSource.query(
      `INSERT INTO tokens (tenant_id, id, type, data, data_key_version, containers, expires_at, created_at)
       SELECT $1, 'expired-' || g, 'token', '\\x00'::bytea, 1, ARRAY['/general/high/'],
              now() - interval '1 hour', now() - interval '2 hours'
       FROM generate_series(1, 10000) g`,
      [tenant.tenantId],
    );
    await ctx.dataSource.query(
      `INSERT INTO tenant_invitations (tenant_id, id, email, status, secret_hash, expires_at, created_at)
       SELECT $1, gen_random_uuid(), 'person' || g || '@example.com', 'PENDING', 'hash-' || g,
              now() - interval '1 minute', now() - interval '73 hours'
       FROM generate_series(1, 1000) g`,
      [tenant.tenantId],
    );
    const other = replica;
    let reads = 0;
    let stop = false;
    const readLoop = (async () => {
      while (!stop) {
        const res = await request(other.app.getHttpServer())
          .get(`/tokens/${live[reads % 5]}`)
          .set('BT-API-KEY', reader.key);
        expect(res.status).toBe(200);
        reads++;
      }
    })();
    const [, , expiredHere, expiredThere] = await Promise.all([
      ctx.get(PurgeService).run(),
      other.app.get(PurgeService).run(),
      ctx.get(InvitationExpiryService).run(),
      other.app.get(InvitationExpiryService).run(),
    ]);
    // A run that found the job held did nothing; the next tick of either would find nothing left.
    await Promise.all([ctx.get(PurgeService).run(), other.app.get(PurgeService).run()]);
    stop = true;
    await readLoop;

    expect(
      (await purgedCount(ctx.get(MetricsService))) + (await purgedCount(other.app.get(MetricsService))),
    ).toBe(10_000);
    const [tokens] = await ctx.dataSource.query<{ purged: number; left_over: number; live: number }[]>(
      `SELECT count(*) FILTER (WHERE data IS NULL AND deleted_at IS NOT NULL)::int AS purged,
              count(*) FILTER (WHERE id LIKE 'expired-%' AND data IS NOT NULL)::int AS left_over,
              count(*) FILTER (WHERE id = ANY($2) AND data IS NOT NULL AND deleted_at IS NULL)::int AS live
       FROM tokens WHERE tenant_id = $1`,
      [tenant.tenantId, live],
    );
    expect(tokens).toEqual({ purged: 10_000, left_over: 0, live: 5 });
    const leftover =
      (await ctx.get(InvitationExpiryService).run()) + (await other.app.get(InvitationExpiryService).run());
    expect(expiredHere + expiredThere + leftover).toBe(1000);
    const [invitations] = await ctx.dataSource.query<{ expired: number }[]>(
      `SELECT count(*) FILTER (WHERE status = 'EXPIRED')::int AS expired FROM tenant_invitations WHERE tenant_id = $1`,
      [tenant.tenantId],
    );
    expect(invitations.expired).toBe(1000);
    expect(reads).toBeGreaterThan(0);
    expect(ctx.logs.filter((l) => l.includes('"level":50'))).toEqual([]);
  });
});
