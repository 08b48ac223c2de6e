import { ApplicationPrincipals } from '../../src/applications/application-principals.service';
import { createProxy, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TestContext, TestTenant } from '../support/test-app';

/** Issue 37 item 4: the address limit is for anonymous traffic; a valid key is counted by its application. */
describe('an address over the anonymous limit by bad keys', () => {
  let ctx: TestContext;
  let tenant: TestTenant;

  beforeAll(async () => {
    ctx = await TestContext.create({ env: { RATE_LIMIT_UNAUTHENTICATED: '3/600' } });
    tenant = await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  it("still serves that address's valid management and private keys, counted against their application", async () => {
    const app = await ctx.newApplication(tenant, 'private', ['token:read']);
    for (let i = 0; i < 3; i += 1) {
      expect((await ctx.http.get('/tokens').set('BT-API-KEY', 'key_wrong')).status).toBe(401);
    }
    const flooded = await ctx.http.get('/tokens').set('BT-API-KEY', 'key_wrong');
    expect(flooded.status).toBe(429);
    expect(flooded.headers.ratelimit).toMatch(/^"unauthenticated";r=0;t=\d+$/);

    const management = await ctx.http.get('/applications').set('BT-API-KEY', tenant.key);
    expect(management.status).toBe(200);
    expect(management.headers['ratelimit-policy']).toMatch(/^"application";q=\d+;w=\d+$/);
    const own = await ctx.http.get('/tokens').set('BT-API-KEY', app.key);
    expect(own.status).toBe(200);
    expect(own.headers.ratelimit).toMatch(/^"application";r=\d+;t=\d+$/);

    // Failed authentications from there are still refused, with or without a key.
    expect((await ctx.http.get('/tokens').set('BT-API-KEY', 'key_other')).status).toBe(429);
    expect((await ctx.http.get('/tokens')).status).toBe(429);
    expect((await ctx.http.get('/applications').set('BT-API-KEY', tenant.key)).status).toBe(200);
  });

  it('refuses a repeated unknown key from there without another lookup; a valid key is still looked up', async () => {
    const lookups = jest.spyOn(ctx.get(ApplicationPrincipals), 'authenticateHash');
    try {
      for (let i = 0; i < 5; i += 1) {
        expect((await ctx.http.get('/tokens').set('BT-API-KEY', 'key_revoked')).status).toBe(429);
      }
      expect(lookups).toHaveBeenCalledTimes(1);
      const app = await ctx.newApplication(tenant, 'private', ['token:read']);
      expect((await ctx.http.get('/tokens').set('BT-API-KEY', app.key)).status).toBe(200);
      expect(lookups).toHaveBeenCalledTimes(2);
    } finally {
      lookups.mockRestore();
    }
  });
});

describe("an address over the anonymous limit by a backend's own proxy-key calls", () => {
  let fx: ProxyFixture;
  let tenant: TestTenant;

  beforeAll(async () => {
    fx = await proxyFixture({
      env: { RATE_LIMIT_UNAUTHENTICATED: '3/600', RATE_LIMIT_PROXY_ADDRESS: '50/600' },
    });
    tenant = await fx.ctx.newTenant();
  });
  afterAll(() => fx.close());

  it('keeps its keyed /proxy and management calls; anonymous ones and bad keys are refused', async () => {
    const ctx = fx.ctx;
    const echo = await fx.server();
    const caller = await ctx.newApplication(tenant, 'private', ['token:use']);
    const open = await createProxy(ctx, tenant, { destination_url: fx.url(echo), require_auth: false });
    const keyed = await createProxy(ctx, tenant, { destination_url: fx.url(echo), require_auth: true });
    const anonymous = () => ctx.http.post('/proxy').set('BT-PROXY-KEY', open.key).send({});
    for (let i = 0; i < 3; i += 1) {
      expect((await anonymous()).status).toBe(200);
    }
    expect((await anonymous()).status).toBe(429);

    const admitted = await ctx.http
      .post('/proxy')
      .set('BT-PROXY-KEY', keyed.key)
      .set('BT-API-KEY', caller.key)
      .send({});
    expect(admitted.status).toBe(200);
    expect(admitted.headers['ratelimit-policy']).toMatch(/^"application";q=\d+;w=\d+$/);
    expect((await ctx.http.get('/proxies').set('BT-API-KEY', tenant.key)).status).toBe(200);

    // A wrong BT-API-KEY, an unknown proxy key, or a valid key on an open proxy: anonymous, refused.
    const wrongKey = ctx.http.post('/proxy').set('BT-PROXY-KEY', keyed.key).set('BT-API-KEY', 'key_wrong');
    expect((await wrongKey.send({})).status).toBe(429);
    const unknownProxy = ctx.http.post('/proxy').set('BT-PROXY-KEY', 'unknown').set('BT-API-KEY', caller.key);
    expect((await unknownProxy.send({})).status).toBe(429);
    const openKeyed = ctx.http.post('/proxy').set('BT-PROXY-KEY', open.key).set('BT-API-KEY', caller.key);
    expect((await openKeyed.send({})).status).toBe(429);
  });
});
