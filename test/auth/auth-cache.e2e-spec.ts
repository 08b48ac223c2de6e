import request from 'supertest';
import type { VaultApp } from '../../src/app';
import { TestContext, TestTenant } from '../support/test-app';

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

/** Keys are cached per replica; a change made through one replica must reach the others' caches. */
describe('application cache across replicas', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let replica: VaultApp | null = null;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
  });
  afterAll(async () => {
    await ctx.close();
  });

  it('stops an old key at once on the replica that regenerated it', async () => {
    const app = await ctx.newApplication(tenant, 'private', ['token:read']);
    await ctx.http.get('/applications/key').set('BT-API-KEY', app.key).expect(200);
    await ctx.http.post(`/applications/${app.id}/regenerate`).set('BT-API-KEY', tenant.key).expect(200);
    await ctx.http.get('/applications/key').set('BT-API-KEY', app.key).expect(401);
  });

  it('applies a permission change at once on the same replica', async () => {
    const app = await ctx.newApplication(tenant, 'private', ['token:read']);
    await ctx.http.get('/tokens').set('BT-API-KEY', app.key).expect(200);
    await ctx.http
      .put(`/applications/${app.id}`)
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'narrowed', permissions: ['token:create'] })
      .expect(200);
    await ctx.http.get('/tokens').set('BT-API-KEY', app.key).expect(403);
  });

  onPostgres('evicts a regenerated or deleted key on another replica through NOTIFY', async () => {
    replica = await ctx.secondInstance();
    const other = () => request(replica!.app.getHttpServer());
    const regenerated = await ctx.newApplication(tenant, 'private', ['token:read']);
    const deleted = await ctx.newApplication(tenant, 'private', ['token:read']);
    // Warm the other replica's cache with both keys.
    await other().get('/applications/key').set('BT-API-KEY', regenerated.key).expect(200);
    await other().get('/applications/key').set('BT-API-KEY', deleted.key).expect(200);

    await ctx.http
      .post(`/applications/${regenerated.id}/regenerate`)
      .set('BT-API-KEY', tenant.key)
      .expect(200);
    await ctx.http.delete(`/applications/${deleted.id}`).set('BT-API-KEY', tenant.key).expect(204);

    const rejectedWithin = async (key: string, ms: number): Promise<boolean> => {
      for (const until = Date.now() + ms; Date.now() < until;) {
        if ((await other().get('/applications/key').set('BT-API-KEY', key)).status === 401) {
          return true;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      return false;
    };
    // Far below the cache TTL (10 s): only the notification can explain it.
    expect(await rejectedWithin(regenerated.key, 2000)).toBe(true);
    expect(await rejectedWithin(deleted.key, 2000)).toBe(true);
  });
});
