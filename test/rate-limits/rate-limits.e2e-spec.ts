import type { Response } from 'supertest';
import { ApplicationPrincipals } from '../../src/applications/application-principals.service';
import { ProxiesService } from '../../src/proxies/proxies.service';
import { createProxy, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TestContext, TestTenant } from '../support/test-app';

const METRICS_TOKEN = 'operator-metrics-token-0123456789abcdef';

/** A 429 in the common error format, with Retry-After and the RateLimit fields naming `limit`. */
function expectLimited(res: Response, limit: string): void {
  expect(res.status).toBe(429);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toEqual({
    type: expect.any(String),
    title: 'Too Many Requests',
    status: 429,
    detail: expect.stringMatching(/^Rate limit reached for .+ Try again in \d+ seconds\.$/),
  });
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(res.headers['ratelimit-policy']).toContain(`"${limit}";q=`);
  expect(res.headers.ratelimit).toMatch(new RegExp(`"${limit}";r=0;t=\\d+`));
}

async function limitedCount(ctx: TestContext, route: string, limit: string): Promise<number> {
  const res = await ctx.http.get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`);
  const line = String(res.text)
    .split('\n')
    .find((l) => l.startsWith(`token_vault_rate_limited_total{route="${route}",limit="${limit}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

describe('rate limits per application and per tenant', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let other: TestTenant;

  beforeAll(async () => {
    ctx = await TestContext.create({
      env: { RATE_LIMIT_APPLICATION: '3/600', RATE_LIMIT_TENANT: '5/600', METRICS_TOKEN },
    });
    tenant = await ctx.newTenant('Busy');
    other = await ctx.newTenant('Quiet');
  });
  afterAll(() => ctx.close());

  it("reports the caller's own limit on every authenticated answer and answers 429 past it", async () => {
    const app = await ctx.newApplication(tenant, 'private', ['token:read']);
    for (let remaining = 2; remaining >= 0; remaining--) {
      const res = await ctx.http.get('/tokens').set('BT-API-KEY', app.key);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe('"application";q=3;w=600');
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"application";r=${remaining};t=\\d+$`));
    }
    expectLimited(await ctx.http.get('/tokens').set('BT-API-KEY', app.key), 'application');
    expect(await limitedCount(ctx, '/tokens', 'application')).toBe(1);
    // Another application of the same tenant has its own allowance.
    const second = await ctx.newApplication(tenant, 'private', ['token:read']);
    expect((await ctx.http.get('/tokens').set('BT-API-KEY', second.key)).status).toBe(200);
  });

  it('answers 429 past the tenant limit, whichever of its applications asks; other tenants are served', async () => {
    const crowd = await ctx.newTenant('Crowd');
    const apps = await Promise.all([1, 2, 3].map(() => ctx.newApplication(crowd, 'private', ['token:read'])));
    const statuses: number[] = [];
    for (const app of [...apps, ...apps]) {
      statuses.push((await ctx.http.get('/tokens').set('BT-API-KEY', app.key)).status);
    }
    // Two requests of each application: under 3 each, but the tenant's fifth is its last.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const refused = await ctx.http.get('/tokens').set('BT-API-KEY', apps[0].key);
    expectLimited(refused, 'tenant');
    // The refusal names the tenant limit it hit, and otherwise only the caller's own.
    expect(refused.headers.ratelimit).toMatch(/^"application";r=0;t=\d+, "tenant";r=0;t=\d+$/);
    const quiet = await ctx.newApplication(other, 'private', ['token:read']);
    expect((await ctx.http.get('/tokens').set('BT-API-KEY', quiet.key)).status).toBe(200);
  });

  it("never shows a key the tenant's traffic: a public, private or management key sees its own limit", async () => {
    const shared = await ctx.newTenant('Shared');
    const busy = await ctx.newApplication(shared, 'private', ['token:read']);
    expect((await ctx.http.get('/tokens').set('BT-API-KEY', busy.key)).status).toBe(200);
    expect((await ctx.http.get('/tokens').set('BT-API-KEY', busy.key)).status).toBe(200);
    const pub = await ctx.newApplication(shared, 'public', ['token:create']);
    const created = await ctx.http
      .post('/tokens')
      .set('BT-API-KEY', pub.key)
      .send({ type: 'token', data: 'public value' });
    expect(created.status).toBe(201);
    expect(created.headers['ratelimit-policy']).toBe('"application";q=3;w=600');
    expect(created.headers.ratelimit).toMatch(/^"application";r=2;t=\d+$/);
    const management = await ctx.http.get('/applications').set('BT-API-KEY', shared.key);
    expect(management.headers.ratelimit).toMatch(/^"application";r=2;t=\d+$/);
  });
});

describe('unauthenticated floods', () => {
  let ctx: TestContext;
  let tenant: TestTenant;

  beforeAll(async () => {
    ctx = await TestContext.create({
      env: { RATE_LIMIT_UNAUTHENTICATED: '3/600', RATE_LIMIT_PROXY_ADDRESS: '2/600', METRICS_TOKEN },
    });
    tenant = await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  it('limits missing and wrong keys by address; a request without a key is then refused from memory', async () => {
    const lookups = jest.spyOn(ctx.get(ApplicationPrincipals), 'authenticateHash');
    expect((await ctx.http.get('/tokens')).status).toBe(401);
    expect((await ctx.http.get('/tokens').set('BT-API-KEY', 'key_wrong')).status).toBe(401);
    expect((await ctx.http.get('/tokens').set('BT-API-KEY', 'key_wrong')).status).toBe(401);
    expect(lookups).toHaveBeenCalledTimes(2);
    expectLimited(await ctx.http.get('/tokens').set('BT-API-KEY', 'key_wrong'), 'unauthenticated');
    expect(lookups).toHaveBeenCalledTimes(3);
    expectLimited(await ctx.http.get('/tokens'), 'unauthenticated');
    expect(lookups).toHaveBeenCalledTimes(3);
    // A key is still looked up (issue 37 item 4): a valid one is served, counted by its application.
    expect((await ctx.http.get('/applications').set('BT-API-KEY', tenant.key)).status).toBe(200);
    expectLimited(await ctx.http.get('/applications').set('BT-API-KEY', 'key_other'), 'unauthenticated');
    expect(lookups).toHaveBeenCalledTimes(5);
    expect(await limitedCount(ctx, '/tokens', 'unauthenticated')).toBe(2);
    lookups.mockRestore();
  });
});

describe('/proxy keys', () => {
  let fx: ProxyFixture;
  let tenant: TestTenant;

  beforeAll(async () => {
    fx = await proxyFixture({
      env: { RATE_LIMIT_UNAUTHENTICATED: '4/600', RATE_LIMIT_PROXY_ADDRESS: '2/600' },
    });
    tenant = await fx.ctx.newTenant();
  });
  afterAll(() => fx.close());

  it('limits a require_auth:false proxy per proxy and address, and proxy keys per address before the lookup', async () => {
    const ctx = fx.ctx;
    const echo = await fx.server();
    const { key } = await createProxy(ctx, tenant, { destination_url: fx.url(echo), require_auth: false });
    const admitted = await ctx.http.post('/proxy').set('BT-PROXY-KEY', key).send({});
    expect(admitted.status).toBe(200);
    expect(admitted.headers['ratelimit-policy']).toBe('"proxy-address";q=2;w=600');
    expect((await ctx.http.post('/proxy').set('BT-PROXY-KEY', key).send({})).status).toBe(200);
    const limited = await ctx.http.post('/proxy').set('BT-PROXY-KEY', key).send({});
    expect(limited.status).toBe(429);
    expect(limited.body.proxy_error).toMatchObject({ status: 429, title: 'Too Many Requests' });
    expect(limited.headers.ratelimit).toMatch(/^"proxy-address";r=0;t=\d+$/);

    const lookups = jest.spyOn(ctx.get(ProxiesService), 'findByKey');
    expect((await ctx.http.post('/proxy').set('BT-PROXY-KEY', 'unknown').send({})).status).toBe(404);
    const flooded = await ctx.http.post('/proxy').set('BT-PROXY-KEY', 'unknown').send({});
    expect(flooded.status).toBe(429);
    expect(flooded.headers.ratelimit).toMatch(/^"unauthenticated";r=0;t=\d+$/);
    expect((await ctx.http.post('/proxy').set('BT-PROXY-KEY', key).send({})).status).toBe(429);
    expect(lookups).toHaveBeenCalledTimes(1);
    lookups.mockRestore();
  });
});

describe('the invitation accept page', () => {
  it('is limited per address in the shared limiter', async () => {
    const ctx = await TestContext.create({ env: { RATE_LIMIT_INVITATION_ACCEPT: '2/600' } });
    try {
      expect((await ctx.http.get('/invitations/accept?token=nothing')).status).not.toBe(429);
      expect((await ctx.http.get('/invitations/accept?token=nothing')).status).not.toBe(429);
      const limited = await ctx.http.get('/invitations/accept?token=nothing');
      expect(limited.status).toBe(429);
      expect(limited.headers['ratelimit-policy']).toBe('"invitation-accept";q=2;w=600');
    } finally {
      await ctx.close();
    }
  });
});

describe('/proxy keys of proxies that require a key', () => {
  let fx: ProxyFixture;
  let tenant: TestTenant;

  beforeAll(async () => {
    fx = await proxyFixture({ env: { RATE_LIMIT_UNAUTHENTICATED: '3/600' } });
    tenant = await fx.ctx.newTenant();
  });
  afterAll(() => fx.close());

  it('count a call without BT-API-KEY once against the address, not once per check', async () => {
    const echo = await fx.server();
    const { key } = await createProxy(fx.ctx, tenant, { destination_url: fx.url(echo), require_auth: true });
    for (let i = 0; i < 3; i += 1) {
      expect((await fx.ctx.http.post('/proxy').set('BT-PROXY-KEY', key).send({})).status).toBe(401);
    }
    expect((await fx.ctx.http.post('/proxy').set('BT-PROXY-KEY', key).send({})).status).toBe(429);
  });
});
