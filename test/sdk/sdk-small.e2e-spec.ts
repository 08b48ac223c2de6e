import type { AddressInfo } from 'node:net';
import { BasisTheoryClient } from '@basis-theory/node-sdk';
import { BasisTheory } from '@basis-theory/basis-theory-js';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData } from '../support/token-factory';

const CODE = 'module.exports = async function (req) { return { raw: { echo: req.args.value } }; };';

/** Issue 41's smaller SDK items: webhooks.ping, a reactor's whole application, the usage report's fields. */
describe('official SDKs: ping, reactor applications, usage report', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let base: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    await ctx.vault.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.vault.app.getHttpServer().address() as AddressInfo).port}`;
    tenant = await ctx.newTenant('Small');
  });
  afterAll(() => ctx.close());

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
