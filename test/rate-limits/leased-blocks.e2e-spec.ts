import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { VaultApp } from '../../src/app';
import { TestContext } from '../support/test-app';

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

/** `count` requests on `vault`, `batch` at a time: how many were not refused with 429. */
async function passed(vault: VaultApp, count: number, key?: string, batch = 10): Promise<number> {
  let ok = 0;
  for (let sent = 0; sent < count; sent += batch) {
    const statuses = await Promise.all(
      Array.from({ length: Math.min(batch, count - sent) }, async () => {
        const req = request(vault.app.getHttpServer()).get('/tokens');
        return (await (key === undefined ? req : req.set('BT-API-KEY', key))).status;
      }),
    );
    ok += statuses.filter((s) => s !== 429).length;
  }
  return ok;
}

/** The shared count of `limit` for `key` in the rate_limits table. */
async function sharedCount(ctx: TestContext, limit: string, key: string): Promise<number> {
  const rows: { points: string }[] = await ctx
    .get(DataSource)
    .query('SELECT points FROM rate_limits WHERE key = $1', [`tv-rl:${limit}:${key}`]);
  return rows.length === 0 ? 0 : Number(rows[0].points);
}

async function eventually(check: () => Promise<boolean>, ms = 8000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) {
      throw new Error('condition not met in time');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Leased blocks (src/rate-limits/lease.ts): replicas hand out points from memory, the limit still holds. */
describe('rate limits counted in leased blocks', () => {
  onPostgres('two replicas on one database together admit no more than the limit', async () => {
    const ctx = await TestContext.create({ env: { RATE_LIMIT_APPLICATION: '300/600' } });
    try {
      const app = await ctx.newApplication(await ctx.newTenant(), 'private', ['token:read']);
      const second = await ctx.secondInstance();
      const admitted = (
        await Promise.all([passed(ctx.vault, 250, app.key), passed(second, 250, app.key)])
      ).reduce((a, b) => a + b);
      expect(admitted).toBeLessThanOrEqual(300);
      // Each replica holds at most one and a half blocks (3 % of the limit) unused.
      expect(admitted).toBeGreaterThanOrEqual(300 - 2 * 9);
      expect(await sharedCount(ctx, 'application', app.id)).toBeGreaterThanOrEqual(300);
    } finally {
      await ctx.close();
    }
  });

  onPostgres(
    'a block left idle goes back to the shared count, and the other replica can use it',
    async () => {
      const ctx = await TestContext.create({ env: { RATE_LIMIT_APPLICATION: '300/600' } });
      try {
        const app = await ctx.newApplication(await ctx.newTenant(), 'private', ['token:read']);
        const second = await ctx.secondInstance();
        expect(await passed(second, 40, app.key, 1)).toBe(40);
        // The second replica took more than it used, then gives the rest back once idle.
        expect(await sharedCount(ctx, 'application', app.id)).toBeGreaterThan(40);
        await eventually(async () => (await sharedCount(ctx, 'application', app.id)) === 40);
        expect(await passed(ctx.vault, 300, app.key)).toBe(260);
      } finally {
        await ctx.close();
      }
    },
  );

  onPostgres('a small limit is exact across two replicas, concurrent requests included', async () => {
    const ctx = await TestContext.create({ env: { RATE_LIMIT_APPLICATION: '3/60' } });
    try {
      const app = await ctx.newApplication(await ctx.newTenant(), 'private', ['token:read']);
      const second = await ctx.secondInstance();
      const admitted = await Promise.all([passed(ctx.vault, 6, app.key, 6), passed(second, 6, app.key, 6)]);
      expect(admitted[0] + admitted[1]).toBe(3);
    } finally {
      await ctx.close();
    }
  });

  it('through Redis: two instances share an address limit, and one that stops gives its blocks back', async () => {
    const env = {
      REDIS_URL: 'redis://127.0.0.1:6379',
      RATE_LIMIT_KEY_PREFIX: `tv-test-${randomBytes(6).toString('hex')}`,
      RATE_LIMIT_UNAUTHENTICATED: '300/600',
    };
    // Two vaults, each on its own database: only Redis is shared, and the client address is the key.
    const first = await TestContext.create({ env });
    let firstOpen = true;
    const second = await TestContext.create({ env });
    try {
      expect(await passed(first.vault, 40, undefined, 1)).toBe(40);
      firstOpen = false;
      await first.close();
      expect(await passed(second.vault, 300)).toBe(260);
      expect((await request(second.vault.app.getHttpServer()).get('/tokens')).status).toBe(429);
    } finally {
      await second.close();
      if (firstOpen) {
        await first.close();
      }
    }
  });
});
