import type { AddressInfo } from 'node:net';
import { BasisTheoryClient } from '@basis-theory/node-sdk';
import { BasisTheory } from '@basis-theory/basis-theory-js';
import { TestHttpsServer } from '../support/https-test-server';
import { ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, tokenApp } from '../support/token-factory';

const CODE = 'module.exports = async function (req) { return { raw: { echo: req.args.value } }; };';

/** Issue 41's smaller SDK items: ping, a reactor's whole application, listed proxy transforms, usage report. */
describe('official SDKs: ping, reactor applications, proxy transform lists, usage report', () => {
  let fx: ProxyFixture;
  let ctx: TestContext;
  let echo: TestHttpsServer;
  let tenant: TestTenant;
  let base: string;

  beforeAll(async () => {
    fx = await proxyFixture();
    ctx = fx.ctx;
    echo = await fx.server();
    await ctx.vault.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.vault.app.getHttpServer().address() as AddressInfo).port}`;
    tenant = await ctx.newTenant('Small');
  });
  afterAll(() => fx.close());

  const node = (apiKey: string) => new BasisTheoryClient({ apiKey, baseUrl: base, maxRetries: 0 });
  /** basis-theory-js turns any host but `localhost` into https: its clients are pointed back at plain HTTP. */
  const js = async (apiKey: string) => {
    const bt = await new BasisTheory().init(apiKey, { apiBaseUrl: base, disableTelemetry: true });
    for (const service of Object.values(bt as unknown as Record<string, unknown>)) {
      const client = (service as { client?: { defaults: { baseURL?: string } } } | null)?.client;
      if (typeof client?.defaults.baseURL === 'string') {
        client.defaults.baseURL = client.defaults.baseURL.replace(/^https:/, 'http:');
      }
    }
    return bt;
  };

  it('webhooks.ping answers GET /ping with 200 and no body, with or without a key', async () => {
    const answer = await node(tenant.key).webhooks.ping().withRawResponse();
    expect(answer.rawResponse.status).toBe(200);
    expect(answer.data).toBeUndefined();
    expect((await node('key_not_a_real_one').webhooks.ping().withRawResponse()).rawResponse.status).toBe(200);
    const plain = await ctx.http.get('/ping').expect(200);
    expect(plain.text).toBe('');
  });

  it("node-sdk: a reactor's application is the whole application, on create, get, list and update", async () => {
    const bt = node(tenant.key);
    const app = await bt.applications.create({
      name: 'Runner',
      type: 'private',
      permissions: ['token:create'],
    });
    const shown = await bt.applications.get(app.id as string);
    const created = await bt.reactors.create({ name: 'Whole', code: CODE, application: { id: app.id } });
    expect(created.application).toEqual(shown);
    expect(created.application).toMatchObject({
      id: app.id,
      tenantId: tenant.tenantId,
      name: 'Runner',
      type: 'private',
      permissions: ['token:create'],
    });
    expect(created.application?.key).toBeUndefined();
    expect((await bt.reactors.get(created.id as string)).application).toEqual(shown);
    const page = await bt.reactors.list({ id: [created.id as string] });
    expect(page.data.map((r) => r.application)).toEqual([shown]);
    const updated = await bt.reactors.update(created.id as string, {
      name: 'Whole 2',
      code: CODE,
      application: { id: app.id },
    });
    expect(updated.application).toEqual(shown);
  });

  it("basis-theory-js: a reactor's application carries tenantId and the rest of the application", async () => {
    const bt = await js(tenant.key);
    const app = await bt.applications.create({
      name: 'Js runner',
      type: 'private',
      permissions: ['token:read'],
    });
    const reactor = await bt.reactors.create({ name: 'Js whole', code: CODE, application: { id: app.id } });
    const { key: _key, ...shown } = await bt.applications.retrieve(app.id);
    expect(reactor.application).toEqual(shown);
    expect(reactor.application?.tenantId).toBe(tenant.tenantId);
    expect((await bt.reactors.retrieve(reactor.id)).application).toEqual(shown);
    const listed = await bt.reactors.list({ id: [reactor.id] });
    expect(listed.data.map((r) => r.application)).toEqual([shown]);
  });

  it('node-sdk proxies.create with requestTransforms/responseTransforms, sent as the snake-case lists', async () => {
    const bt = node(tenant.key);
    const tag =
      'module.exports = async (req) => ({ body: { ...req.args.body, tagged: true }, headers: req.args.headers });';
    const created = await bt.proxies.create({
      name: 'Listed',
      destinationUrl: fx.url(echo),
      requestTransforms: [{ type: 'code', code: tag }],
      responseTransforms: [
        { type: 'mask', matcher: 'regex', expression: '"pan":"(\\d+)"', replacement: 'X' },
        { type: 'append_json', options: { value: 'vault', location: '$.source' } },
        { type: 'append_text', options: { value: '' } },
        { type: 'append_header', options: { value: 'listed', location: 'x-proxy' } },
      ],
    });
    expect(created.requestTransforms).toEqual([{ type: 'code', code: tag }]);
    expect(created.responseTransforms?.map((t) => t.type)).toEqual([
      'mask',
      'append_json',
      'append_text',
      'append_header',
    ]);
    expect((await bt.proxies.get(created.id as string)).responseTransforms).toEqual(
      created.responseTransforms,
    );
    const caller = await tokenApp(ctx, tenant, [], ['token:use']);
    const answer = await ctx.http
      .post('/proxy')
      .set('BT-API-KEY', caller.key)
      .set('BT-PROXY-KEY', created.key as string)
      .send({ pan: '4242424242424242' });
    expect(answer.status).toBe(200);
    expect(answer.headers['x-proxy']).toBe('listed');
    expect(answer.body).toEqual({ pan: 'X'.repeat(16), tagged: true, source: 'vault' });
    const updated = await bt.proxies.update(created.id as string, {
      name: 'Listed',
      destinationUrl: fx.url(echo),
      responseTransforms: [{ type: 'append_text', options: { value: '!' } }],
    });
    expect(updated.requestTransforms ?? null).toBeNull();
    expect(updated.responseTransforms).toEqual([{ type: 'append_text', options: { value: '!' } }]);
  });

  it('node-sdk proxies.create with a tokenize transform: the options answered back, the token created', async () => {
    const bt = node(tenant.key);
    const writer = await ctx.newApplication(tenant, 'private', ['token:create']);
    const created = await bt.proxies.create({
      name: 'Tokenizing',
      destinationUrl: fx.url(echo),
      application: { id: writer.id },
      requestTransforms: [
        {
          type: 'tokenize',
          options: {
            identifier: 'card',
            token: { type: 'card', data: '{{ req.card }}', metadata: { via: 'proxy' } },
            location: '$.card',
          },
        },
      ],
    });
    expect(created.requestTransforms).toEqual([
      {
        type: 'tokenize',
        options: {
          identifier: 'card',
          token: { type: 'card', data: '{{ req.card }}', metadata: { via: 'proxy' } },
          location: '$.card',
        },
      },
    ]);
    const caller = await tokenApp(ctx, tenant, [], ['token:use']);
    const card = cardData();
    const answer = await ctx.http
      .post('/proxy')
      .set('BT-API-KEY', caller.key)
      .set('BT-PROXY-KEY', created.key as string)
      .send({ card });
    expect(answer.status).toBe(200);
    expect(answer.text).not.toContain(card.number);
    const reader = await ctx.newApplication(tenant, 'private', ['token:read']);
    const token = await node(reader.key).tokens.get(answer.body.card as string);
    expect([token.type, token.metadata]).toEqual(['card', { via: 'proxy' }]);
  });

  it('usage report: total_tokens and included_monthly_active_tokens in the token report, in both SDKs', async () => {
    const other = await ctx.newTenant('Counted');
    const writer = await ctx.newApplication(other, 'private', ['token:create']);
    await node(writer.key).tokens.create({ type: 'card', data: cardData() });
    await node(writer.key).tokens.create({ type: 'token', data: 'x' });
    const report = await node(other.key).tenants.self.getUsageReports();
    expect(report.totalTokens).toBe(2);
    const jsReport = await (await js(other.key)).tenants.retrieveUsageReport();
    expect(jsReport).toEqual({
      totalTokens: 2,
      tokenReport: {
        metricsByType: {
          card: { count: 1, lastCreatedAt: expect.any(String) },
          token: { count: 1, lastCreatedAt: expect.any(String) },
        },
        totalTokens: 2,
        monthlyActiveTokens: 2,
        includedMonthlyActiveTokens: 2,
      },
    });
  });
});
