import { randomUUID } from 'node:crypto';
import { expectProblem } from '../support/problems';
import { createProxy, expectProxyError, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

const KEY_HEADER = 'BT-IDEMPOTENCY-KEY';

/**
 * Issue 37, items 6 and 8: whose key space a BT-IDEMPOTENCY-KEY is looked up in. One per caller and
 * destination; none for callers who share their credential (a public key) or have none (a proxy with
 * require_auth: false), which are refused rather than silently run twice on a retry.
 */
describe('BT-IDEMPOTENCY-KEY key spaces', () => {
  let fx: ProxyFixture;
  let tenant: TestTenant;

  beforeAll(async () => {
    fx = await proxyFixture();
    tenant = await fx.ctx.newTenant();
  });
  afterAll(() => fx.close());

  const keptRows = async (): Promise<number> =>
    (
      await fx.ctx.dataSource.query<{ n: number }[]>(
        'SELECT count(*)::int AS n FROM idempotency_keys WHERE tenant_id = $1',
        [tenant.tenantId],
      )
    )[0].n;

  /** An HTTPS destination that counts its calls and answers with its name and the call's number. */
  async function destination(name: string): Promise<{ url: string; calls: () => number }> {
    let calls = 0;
    const server = await fx.server((_req, res) => {
      calls++;
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ name, call: calls }));
    });
    return { url: fx.url(server), calls: () => calls };
  }

  it('keeps nothing for a proxy that needs no API key: the key is refused before anything is sent', async () => {
    const shop = await destination('open');
    const { key } = await createProxy(fx.ctx, tenant, { destination_url: shop.url, require_auth: false });
    const before = await keptRows();
    const send = (idem?: string) => {
      const req = fx.ctx.http.post('/proxy/pay').set('BT-PROXY-KEY', key);
      return (idem === undefined ? req : req.set(KEY_HEADER, idem)).send({ amount: 1 });
    };
    const refused = expectProxyError(await send(randomUUID()), 400);
    expect(refused.detail).toMatch(/require_auth/);
    expect(shop.calls()).toBe(0);
    expect(await keptRows()).toBe(before);
    // Without the key the proxy works as before.
    await send().expect(200);
    expect(shop.calls()).toBe(1);
  });

  // Routed by a configured proxy's key, or by a destination URL: both are destinations of their own.
  const routings: { name: string; route: (url: string) => Promise<Record<string, string>> }[] = [
    {
      name: 'configured proxy',
      route: async (url) => ({
        'BT-PROXY-KEY': (await createProxy(fx.ctx, tenant, { destination_url: url })).key,
      }),
    },
    { name: 'BT-PROXY-URL destination', route: (url) => Promise.resolve({ 'BT-PROXY-URL': url }) },
  ];

  it.each(routings)('gives each $name its own key space: B never replays A’s answer', async ({ route }) => {
    const caller = await tokenApp(fx.ctx, tenant, [], ['token:use']);
    const [a, b] = [await destination('A'), await destination('B')];
    const [toA, toB] = [await route(a.url), await route(b.url)];
    const idem = randomUUID();
    const send = async (to: Record<string, string>) => {
      const res = await fx.ctx.http
        .post('/proxy/charge')
        .set({ ...to, 'BT-API-KEY': caller.key, [KEY_HEADER]: idem })
        .send({ amount: 5 })
        .expect(200);
      return [res.body, res.headers['idempotent-replayed']] as unknown[];
    };
    expect(await send(toA)).toEqual([{ name: 'A', call: 1 }, undefined]);
    expect(await send(toB)).toEqual([{ name: 'B', call: 1 }, undefined]);
    // Each retry still finds its own destination's answer.
    expect(await send(toA)).toEqual([{ name: 'A', call: 1 }, 'true']);
    expect(await send(toB)).toEqual([{ name: 'B', call: 1 }, 'true']);
    expect([a.calls(), b.calls()]).toEqual([1, 1]);
  });

  it('keeps no answers for a public key, which its holders share: the key is refused with a 400', async () => {
    const shared = await fx.ctx.newApplication(tenant, 'public', ['token:create']);
    const body = { type: 'token', data: 'typed in one browser' };
    const create = (idem?: string) => {
      const req = fx.ctx.http.post('/tokens').set('BT-API-KEY', shared.key);
      return (idem === undefined ? req : req.set(KEY_HEADER, idem)).send(body);
    };
    const before = await keptRows();
    const idem = randomUUID();
    // Two browsers holding the same public key, sending the same key: neither gets the other's token.
    for (let i = 0; i < 2; i++) {
      const refused = await create(idem);
      expectProblem(refused, 400, ['BT-IDEMPOTENCY-KEY']);
      expect(refused.text).not.toMatch(/"id"/);
    }
    expect(await keptRows()).toBe(before);
    await create().expect(201);
  });
});
