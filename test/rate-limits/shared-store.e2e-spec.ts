import { randomBytes } from 'node:crypto';
import request from 'supertest';
import type { VaultApp } from '../../src/app';
import { TestContext } from '../support/test-app';

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

/** GET /tokens with `key` on one instance; its status. */
async function statusOn(vault: VaultApp, key: string): Promise<number> {
  return (await request(vault.app.getHttpServer()).get('/tokens').set('BT-API-KEY', key)).status;
}

/**
 * A second replica: the same configuration on the same database (or Redis). The embedded database serves
 * one process only, so there the test's own instance stands in for both.
 */
async function withSecondInstance(
  ctx: TestContext,
  test: (second: VaultApp) => Promise<void>,
): Promise<void> {
  if (ctx.database.embedded) {
    await test(ctx.vault);
    return;
  }
  await test(await ctx.secondInstance());
}

describe('limits shared by replicas', () => {
  onPostgres('hold across two instances on one PostgreSQL database', async () => {
    const ctx = await TestContext.create({
      env: { RATE_LIMIT_APPLICATION: '3/600', RATE_LIMIT_INVITATION_ACCEPT: '2/600' },
    });
    try {
      const tenant = await ctx.newTenant();
      const app = await ctx.newApplication(tenant, 'private', ['token:read']);
      await withSecondInstance(ctx, async (second) => {
        expect(await statusOn(ctx.vault, app.key)).toBe(200);
        expect(await statusOn(second, app.key)).toBe(200);
        expect(await statusOn(ctx.vault, app.key)).toBe(200);
        expect(await statusOn(second, app.key)).toBe(429);

        const accept = (vault: VaultApp) =>
          request(vault.app.getHttpServer()).get('/invitations/accept?token=nothing');
        expect((await accept(ctx.vault)).status).not.toBe(429);
        expect((await accept(second)).status).not.toBe(429);
        expect((await accept(ctx.vault)).status).toBe(429);
      });
    } finally {
      await ctx.close();
    }
  });

  it('hold across two instances through Redis (REDIS_URL; one instance on the embedded database), under their own key prefix', async () => {
    const prefix = `tv-test-${randomBytes(6).toString('hex')}`;
    const ctx = await TestContext.create({
      env: {
        REDIS_URL: 'redis://127.0.0.1:6379',
        RATE_LIMIT_KEY_PREFIX: prefix,
        RATE_LIMIT_TENANT: '3/600',
      },
    });
    try {
      const tenant = await ctx.newTenant();
      const app = await ctx.newApplication(tenant, 'private', ['token:read']);
      await withSecondInstance(ctx, async (second) => {
        expect([await statusOn(second, app.key), await statusOn(ctx.vault, app.key)]).toEqual([200, 200]);
        expect(await statusOn(second, app.key)).toBe(200);
        const limited = await request(ctx.vault.app.getHttpServer())
          .get('/tokens')
          .set('BT-API-KEY', app.key);
        expect(limited.status).toBe(429);
        expect(limited.headers.ratelimit).toMatch(/"tenant";r=0;t=\d+/);
      });
    } finally {
      await ctx.close();
    }
  });

  it('keep answering when the store is down: the limit counts per replica meanwhile', async () => {
    // Nothing listens on port 1 of 127.0.0.1: every Redis command fails at once.
    const ctx = await TestContext.create({
      env: { REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_APPLICATION: '2/600' },
    });
    try {
      const tenant = await ctx.newTenant();
      const app = await ctx.newApplication(tenant, 'private', ['token:read']);
      expect([await statusOn(ctx.vault, app.key), await statusOn(ctx.vault, app.key)]).toEqual([200, 200]);
      expect(await statusOn(ctx.vault, app.key)).toBe(429);
      expect(ctx.logs.join('')).toMatch(/Rate limit store failed/);
    } finally {
      await ctx.close();
    }
  });
});
