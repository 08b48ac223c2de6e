import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AuditChain } from '../../src/audit/audit-chain.service';
import { eventually } from '../support/audit';
import { echoHandler } from '../support/https-test-server';
import { createProxy, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import { TestTenant } from '../support/test-app';
import { cardNumber, tokenApp } from '../support/token-factory';

const spec = JSON.parse(readFileSync(join(__dirname, '../../openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, unknown>>;
};
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

describe('no secret reaches the audit trail (canary scan)', () => {
  let fx: ProxyFixture;
  let tenant: TestTenant;
  /** The walk's own tenant: the walk deletes it (DELETE /tenants/self) among everything else it sends. */
  let walker: TestTenant;
  const card = cardNumber();
  const key = 'key_Canary' + 'Q'.repeat(38);
  const secret = 'Canary' + 'W'.repeat(26);
  beforeAll(async () => {
    fx = await proxyFixture();
    tenant = await fx.ctx.newTenant();
    walker = await fx.ctx.newTenant();
  });
  afterAll(() => fx.close());

  it('plants a card number and a key in every route, then finds neither in the table nor in /logs', async () => {
    const { ctx } = fx;
    const planted = { number: card, key, secret, data: { number: card, key }, args: { card, key } };
    // Every documented route: the canary in the path, the query, the body, and as the API key.
    for (const [path, methods] of Object.entries(spec.paths)) {
      const url = path.replace(/\{[^}]+\}/g, card) + `?q=${card}&k=${key}`;
      for (const method of METHODS.filter((m) => m in methods)) {
        await ctx.http[method](url).set('BT-API-KEY', walker.key).set('X-Secret', key).send(planted);
        await ctx.http[method](url).set('BT-API-KEY', key).send(planted);
      }
    }
    // And through every action that succeeds with it.
    const app = await tokenApp(
      ctx,
      tenant,
      [],
      ['token:create', 'token:read', 'token:update', 'token:search', 'token:use'],
    );
    const token = await app.api.create({
      type: 'card',
      data: { number: card, expiration_month: 1, expiration_year: 2031 },
      metadata: { k: key },
      search_indexes: ['{{ data.number }}'],
    });
    expect(token.status).toBe(201);
    await app.api.get(token.body.id).expect(200);
    await app.api.list(`?metadata.k=${key}`).expect(200);
    await app.api.search({ query: `data:${card}` }).expect(200);
    await app.api.patch(token.body.id, { metadata: { k: secret } }).expect(200);
    await app.api.tokenize({ a: card, b: { type: 'token', data: key } }).expect(200);
    const { reactorId } = await newReactor(ctx, tenant, {}, { configuration: { currency: key } });
    await reactorsApi(ctx, tenant)
      .react(
        reactorId,
        { args: { amount: 1, t: `{{ ${token.body.id as string} | json: '$.number' }}`, k: key } },
        app.key,
      )
      .expect(200);
    const echo = await fx.server(echoHandler);
    const proxy = await createProxy(ctx, tenant, { destination_url: fx.url(echo), require_auth: true });
    await ctx.http
      .post('/proxy')
      .set('BT-API-KEY', app.key)
      .set('BT-PROXY-KEY', proxy.key)
      .set('X-Card', card)
      .send({ card: `{{ ${token.body.id as string} | json: '$.number' }}`, key })
      .expect(200);

    // Refusals are recorded once answered: wait until the last one (the canary key's 401s) is counted.
    await eventually(async () => {
      const rows: unknown[] = await ctx.dataSource.query(
        "SELECT 1 FROM audit_auth_failures WHERE key_prefix = 'key_Cana'",
      );
      return rows.length > 0 ? rows : null;
    });
    await ctx.get(AuditChain).sealAll();
    const table: { row: string }[] = await ctx.dataSource.query(
      `SELECT r::text AS row FROM audit_records r UNION ALL SELECT f::text FROM audit_auth_failures f
       UNION ALL SELECT c::text FROM audit_chains c UNION ALL SELECT l::text FROM audit_links l`,
    );
    expect(table.length).toBeGreaterThan(10);
    const logs: string[] = [];
    for (let page = 1; ; page++) {
      const res = await ctx.http.get(`/logs?size=100&page=${page}`).set('BT-API-KEY', tenant.key).expect(200);
      logs.push(JSON.stringify(res.body));
      if (res.body.data.length < 100) {
        break;
      }
    }
    const everything = [...table.map((r) => r.row), ...logs].join('\n');
    expect(everything).toContain(token.body.id as string);
    for (const canary of [card, key, key.slice(4), secret]) {
      expect(everything).not.toContain(canary);
    }
  });
});
