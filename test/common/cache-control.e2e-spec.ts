import type { Response } from 'supertest';
import { createProxy, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import { TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp, TokensApi } from '../support/token-factory';

const SDK = "require('@basis-theory/basis-theory-reactor-formulas-sdk-js')";
/** What tenant code or a destination may ask for; the vault's answer must still not be stored. */
const CACHEABLE = { 'Cache-Control': 'public, max-age=3600', 'X-Why': 'kept' };

function expectNoStore(res: Response, status: number): void {
  expect([res.status, res.headers['cache-control']]).toEqual([status, 'no-store']);
}

/** Answers that can carry tokens, keys or detokenized data are never stored by a browser or a proxy cache. */
describe('Cache-Control on the vault answers', () => {
  let fx: ProxyFixture;
  let tenant: TestTenant;
  let api: TokensApi;
  let appKey: string;
  let cardId: string;

  beforeAll(async () => {
    fx = await proxyFixture();
    tenant = await fx.ctx.newTenant();
    const app = await tokenApp(fx.ctx, tenant, [
      rule('/', 'reveal', ['token:create', 'token:read', 'token:update', 'token:search', 'token:use']),
    ]);
    api = app.api;
    appKey = app.key;
    const created = await api.create({ type: 'card', data: cardData() });
    expectNoStore(created, 201);
    cardId = created.body.id as string;
  });
  afterAll(() => fx.close());

  it('is no-store on token reads, lists, searches, tokenize and errors', async () => {
    expectNoStore(await api.get(cardId), 200);
    expectNoStore(await api.list(), 200);
    expectNoStore(await api.search({ query: `id:${cardId}` }), 200);
    expectNoStore(await api.tokenize({ card: { type: 'card', data: cardData() } }), 200);
    expectNoStore(await api.get('no-such-token'), 404);
    expectNoStore(await fx.ctx.http.get('/tokens'), 401);
    expectNoStore(await fx.ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key), 200);
    expectNoStore(await fx.ctx.http.get('/health'), 200);
  });

  it('is no-store on react, also when the code answers with its own Cache-Control', async () => {
    const echo = await newReactor(fx.ctx, tenant, {
      code: 'module.exports = async function (req) { return { raw: req.args }; };',
    });
    const reacted = await reactorsApi(fx.ctx, tenant).react(
      echo.reactorId,
      { args: { card: `{{ ${cardId} }}` } },
      appKey,
    );
    expectNoStore(reacted, 200);
    const custom = await newReactor(fx.ctx, tenant, {
      code: `module.exports = async function () { throw new (${SDK}.CustomHttpResponseError)({ status: 200, headers: ${JSON.stringify(CACHEABLE)}, body: 'x' }); };`,
    });
    const res = await reactorsApi(fx.ctx, tenant).react(custom.reactorId, {}, appKey);
    expectNoStore(res, 200);
    expect(res.headers['x-why']).toBe('kept');
  });

  it("is no-store on /proxy, whatever the destination's Cache-Control", async () => {
    const destination = await fx.server((_req, res) => {
      res.writeHead(200, Object.entries(CACHEABLE).flat());
      res.end('{"card": "relayed"}');
    });
    const { key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(destination),
      require_auth: false,
    });
    const res = await fx.ctx.http.get(`/proxy?bt-proxy-key=${key}`);
    expectNoStore(res, 200);
    expect(res.headers['x-why']).toBe('kept');
  });

  it("leaves the explorer's static files to their own caching", async () => {
    const page = await fx.ctx.http.get('/docs/');
    expect(page.status).toBe(200);
    const asset = /src="\.?\/?(?:docs\/)?([\w.-]+\.js)"/.exec(page.text)?.[1];
    expect(asset).toBeDefined();
    const res = await fx.ctx.http.get(`/docs/${asset}`);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).not.toBe('no-store');
  });
});
