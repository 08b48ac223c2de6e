import { TestHttpsServer } from '../support/https-test-server';
import {
  createProxy,
  echoedHeaders,
  expectProxyError,
  ProxyFixture,
  proxyFixture,
} from '../support/proxy-fixture';
import { TestTenant } from '../support/test-app';
import { cardData, tokenApp } from '../support/token-factory';

const SDK = "require('@basis-theory/basis-theory-reactor-formulas-sdk-js')";

/** Configured proxies through /proxy: routing by key, require_auth, the application's rights, transforms. */
describe('/proxy with a configured proxy (BT-PROXY-KEY)', () => {
  let fx: ProxyFixture;
  let echo: TestHttpsServer;
  let tenant: TestTenant;
  let caller: Awaited<ReturnType<typeof tokenApp>>;
  /** The proxies' application: may use tokens and create them. */
  let proxyApp: Awaited<ReturnType<typeof tokenApp>>;
  let card: { id: string; number: string };

  beforeAll(async () => {
    fx = await proxyFixture();
    echo = await fx.server();
    tenant = await fx.ctx.newTenant();
    caller = await tokenApp(fx.ctx, tenant, [], ['token:create', 'token:read', 'token:use']);
    proxyApp = await tokenApp(fx.ctx, tenant, [], ['token:create', 'token:use']);
    const data = cardData();
    const created = await caller.api.create({ type: 'card', data });
    card = { id: created.body.id as string, number: data.number };
  });
  afterAll(() => fx.close());

  const numberOf = (id: string): string => `{{ ${id} | json: '$.number' }}`;

  it('routes by the BT-PROXY-KEY header or the bt-proxy-key query parameter, which is not forwarded', async () => {
    const { key } = await createProxy(fx.ctx, tenant, { destination_url: fx.url(echo, '/base') });
    const byHeader = await fx.ctx.http
      .post('/proxy/charges?x=1')
      .set('BT-API-KEY', caller.key)
      .set('BT-PROXY-KEY', key)
      .send({ n: numberOf(card.id) });
    expect(byHeader.status).toBe(200);
    expect(byHeader.body).toEqual({ n: card.number });
    expect(byHeader.headers['x-echo-path']).toBe('/base/charges?x=1');
    expect(echoedHeaders(byHeader)).not.toHaveProperty('bt-proxy-key');

    const byQuery = await fx.ctx.http
      .post(`/proxy/charges?bt-proxy-key=${key}&x=2`)
      .set('BT-API-KEY', caller.key)
      .send({ n: 'plain' });
    expect(byQuery.status).toBe(200);
    expect(byQuery.headers['x-echo-path']).toBe('/base/charges?x=2');
  });

  it('answers 404 proxy_error for an unknown key and for another tenant’s proxy', async () => {
    const unknown = await fx.ctx.http
      .post('/proxy')
      .set('BT-API-KEY', caller.key)
      .set('BT-PROXY-KEY', 'nope');
    expectProxyError(unknown, 404);
    const other = await fx.ctx.newTenant('Other');
    const { key } = await createProxy(fx.ctx, other, { destination_url: fx.url(echo) });
    const before = echo.requests;
    const cross = await fx.ctx.http.post('/proxy').set('BT-API-KEY', caller.key).set('BT-PROXY-KEY', key);
    expectProxyError(cross, 404);
    expect(echo.requests).toBe(before);
  });

  it('require_auth true (the default) needs BT-API-KEY', async () => {
    const { key } = await createProxy(fx.ctx, tenant, { destination_url: fx.url(echo) });
    const res = await fx.ctx.http.post('/proxy').set('BT-PROXY-KEY', key).send({ a: 1 });
    expectProxyError(res, 401);
  });

  it('require_auth false works without BT-API-KEY and detokenizes with the proxy application', async () => {
    const { key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(echo),
      require_auth: false,
      application: { id: proxyApp.id },
    });
    const res = await fx.ctx.http
      .post('/proxy')
      .set('BT-PROXY-KEY', key)
      .send({ n: numberOf(card.id) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ n: card.number });
  });

  it('require_auth false without an application forwards plain bodies but cannot detokenize', async () => {
    const { key } = await createProxy(fx.ctx, tenant, { destination_url: fx.url(echo), require_auth: false });
    const plain = await fx.ctx.http.post('/proxy').set('BT-PROXY-KEY', key).send({ a: 1 });
    expect([plain.status, plain.body]).toEqual([200, { a: 1 }]);
    const before = echo.requests;
    const withToken = await fx.ctx.http
      .post('/proxy')
      .set('BT-PROXY-KEY', key)
      .send({ n: numberOf(card.id) });
    expectProxyError(withToken, 403);
    expect(echo.requests).toBe(before);
  });

  it('require_auth false with an application lacking token:use on the container is 403', async () => {
    const creator = await tokenApp(fx.ctx, tenant, [], ['token:create']);
    const { key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(echo),
      require_auth: false,
      application: { id: creator.id },
    });
    const res = await fx.ctx.http
      .post('/proxy')
      .set('BT-PROXY-KEY', key)
      .send({ n: numberOf(card.id) });
    expectProxyError(res, 403);
  });

  describe('transforms', () => {
    it('a request transform gets args, configuration and no bt without an application, and sets body and headers', async () => {
      const code = `module.exports = async function (req) {
        const { body, headers, method, path, query } = req.args;
        return {
          body: { wrapped: body, method, path, query, bt: req.bt === null, region: req.configuration.region },
          headers: { ...headers, 'x-signed': 'sig-' + body.n.slice(-4) },
        };
      };`;
      const { key } = await createProxy(fx.ctx, tenant, {
        destination_url: fx.url(echo),
        request_transform: { code },
        configuration: { region: 'eu' },
      });
      const res = await fx.ctx.http
        .post('/proxy/pay?amount=5')
        .set('BT-API-KEY', caller.key)
        .set('BT-PROXY-KEY', key)
        .set('X-Client', 'c1')
        .send({ n: numberOf(card.id) });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        wrapped: { n: card.number },
        method: 'POST',
        path: '/pay',
        query: 'amount=5',
        bt: true,
        region: 'eu',
      });
      expect(echoedHeaders(res)).toMatchObject({
        'x-client': 'c1',
        'x-signed': `sig-${card.number.slice(-4)}`,
      });
      expect(echoedHeaders(res)).not.toHaveProperty('bt-api-key');
    });

    it('gives bt (acting as the proxy application) when the proxy has one', async () => {
      const code = `module.exports = async function (req) {
        const token = await req.bt.tokenize({ type: 'token', data: req.args.body.secret });
        return { body: { token }, headers: req.args.headers };
      };`;
      const { key } = await createProxy(fx.ctx, tenant, {
        destination_url: fx.url(echo),
        request_transform: { code },
        application: { id: proxyApp.id },
      });
      const res = await fx.ctx.http
        .post('/proxy')
        .set('BT-API-KEY', caller.key)
        .set('BT-PROXY-KEY', key)
        .send({ secret: 'to-tokenize' });
      expect(res.status).toBe(200);
      const tokenId = (res.body as { token: { id: string } }).token.id;
      const stored = await caller.api.get(tokenId);
      expect([stored.status, stored.body.created_by]).toEqual([200, proxyApp.id]);
    });

    it('runs the response transform on 2xx responses only', async () => {
      const status = { value: 200 };
      const server = await fx.server((_req, res, body) => {
        res.writeHead(status.value, { 'content-type': 'application/json', 'x-up': '1' });
        res.end(body);
      });
      const code = `module.exports = async function (req) {
        return { body: { seen: req.args.body, status: req.args.status }, headers: { 'x-transformed': 'yes' } };
      };`;
      const { key } = await createProxy(fx.ctx, tenant, {
        destination_url: fx.url(server),
        response_transform: { code },
      });
      const send = () =>
        fx.ctx.http.post('/proxy').set('BT-API-KEY', caller.key).set('BT-PROXY-KEY', key).send({ a: 1 });
      const ok = await send();
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ seen: { a: 1 }, status: 200 });
      expect(ok.headers['x-transformed']).toBe('yes');
      expect(ok.headers['bt-proxy-destination-status']).toBe('200');
      status.value = 422;
      const failed = await send();
      expect([failed.status, failed.body, failed.headers['x-transformed']]).toEqual([
        422,
        { a: 1 },
        undefined,
      ]);
    });

    it('wraps transform errors in proxy_error with the class status; CustomHttpResponseError as is', async () => {
      const cases: [string, number][] = [
        [`throw new (${SDK}.BadRequestError)('bad amount');`, 400],
        [`throw new (${SDK}.InvalidPaymentMethodError)();`, 402],
        [`throw new Error('boom');`, 500],
      ];
      for (const [thrower, status] of cases) {
        const { key } = await createProxy(fx.ctx, tenant, {
          destination_url: fx.url(echo),
          request_transform: { code: `module.exports = async function () { ${thrower} };` },
        });
        const before = echo.requests;
        const res = await fx.ctx.http
          .post('/proxy')
          .set('BT-API-KEY', caller.key)
          .set('BT-PROXY-KEY', key)
          .send({});
        expectProxyError(res, status);
        expect(echo.requests).toBe(before);
      }
      const { key } = await createProxy(fx.ctx, tenant, {
        destination_url: fx.url(echo),
        response_transform: {
          code: `module.exports = async function () {
            throw new (${SDK}.CustomHttpResponseError)({ status: 409, headers: { 'x-why': 'dup' }, body: { dup: true } });
          };`,
        },
      });
      const custom = await fx.ctx.http
        .post('/proxy')
        .set('BT-API-KEY', caller.key)
        .set('BT-PROXY-KEY', key)
        .send({});
      expect([custom.status, custom.body, custom.headers['x-why']]).toEqual([409, { dup: true }, 'dup']);
    });

    it('lets a transform call out with fetch through the same guard', async () => {
      const code = `module.exports = async function (req) {
        const side = await fetch(req.configuration.lookup + '/lookup', { method: 'POST', body: { q: 1 } });
        let refused = null;
        try {
          await fetch('https://127.0.0.1/');
        } catch (err) {
          refused = err.status;
        }
        return { body: { side: side.headers.get('X-Echo-Method'), echoed: (await side.json()).q, refused }, headers: req.args.headers };
      };`;
      const { key } = await createProxy(fx.ctx, tenant, {
        destination_url: fx.url(echo),
        request_transform: { code },
        configuration: { lookup: fx.url(echo) },
      });
      const res = await fx.ctx.http
        .post('/proxy')
        .set('BT-API-KEY', caller.key)
        .set('BT-PROXY-KEY', key)
        .send({});
      expect([res.status, res.body]).toEqual([200, { side: 'POST', echoed: 1, refused: 400 }]);
    });

    it('never lets a transform send the vault headers on', async () => {
      const code = `module.exports = async function (req) {
        return { body: req.args.body, headers: { 'bt-api-key': 'x', 'BT-PROXY-KEY': 'y', 'x-ok': 'z', 'bad\\nname': 'v' } };
      };`;
      const { key } = await createProxy(fx.ctx, tenant, {
        destination_url: fx.url(echo),
        request_transform: { code },
      });
      const res = await fx.ctx.http
        .post('/proxy')
        .set('BT-API-KEY', caller.key)
        .set('BT-PROXY-KEY', key)
        .send({});
      expect(res.status).toBe(200);
      const seen = echoedHeaders(res);
      expect(seen['x-ok']).toBe('z');
      expect(seen).not.toHaveProperty('bt-api-key');
      expect(seen).not.toHaveProperty('bt-proxy-key');
    });
  });
});
