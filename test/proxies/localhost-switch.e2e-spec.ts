import { TestHttpsServer } from '../support/https-test-server';
import { createProxy, expectProxyError, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

/**
 * PROXY_ALLOW_LOOPBACK=true makes https://localhost:<port> a usable destination (a developer's local mock);
 * with the switch off the name is refused as before. `localhost` resolves to 127.0.0.1 through the test
 * resolver: tests never use real DNS.
 */
describe.each([true, false])('https://localhost with PROXY_ALLOW_LOOPBACK=%s', (allowLoopback) => {
  let fx: ProxyFixture;
  let mock: TestHttpsServer;
  let tenant: TestTenant;
  let caller: Awaited<ReturnType<typeof tokenApp>>;

  beforeAll(async () => {
    fx = await proxyFixture({ allowLoopback, names: { localhost: '127.0.0.1' } });
    mock = await fx.server(undefined, ['localhost']);
    tenant = await fx.ctx.newTenant();
    caller = await tokenApp(fx.ctx, tenant, [], ['token:use']);
  });
  afterAll(() => fx.close());

  const localUrl = (): string => `https://localhost:${mock.port}/mock`;

  it('creates a proxy to localhost only with the switch on', async () => {
    const res = await fx.ctx.http
      .post('/proxies')
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'Local mock', destination_url: localUrl(), require_auth: true });
    if (allowLoopback) {
      expect(res.status).toBe(201);
    } else {
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual({ destination_url: ['is not allowed: localhost is not allowed'] });
    }
  });

  it('forwards to https://localhost:<port> by BT-PROXY-URL and by proxy key only with the switch on', async () => {
    const byUrl = await fx.ctx.http
      .post('/proxy/pay')
      .set('BT-API-KEY', caller.key)
      .set('BT-PROXY-URL', localUrl())
      .send({ amount: 1 });
    if (!allowLoopback) {
      expect(expectProxyError(byUrl, 400).detail).toMatch(/localhost is not allowed/);
      expect(mock.requests).toBe(0);
      return;
    }
    expect(byUrl.status).toBe(200);
    expect(byUrl.headers['x-echo-path']).toBe('/mock/pay');

    const { key } = await createProxy(fx.ctx, tenant, { destination_url: localUrl() });
    const byKey = await fx.ctx.http
      .post('/proxy/refund')
      .set('BT-API-KEY', caller.key)
      .set('BT-PROXY-KEY', key)
      .send({ amount: 2 });
    expect(byKey.status).toBe(200);
    expect(byKey.body).toEqual({ amount: 2 });
    expect(mock.requests).toBe(2);
  });
});
