import { TestHttpsServer } from '../support/https-test-server';
import { ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { cardData, tokenApp } from '../support/token-factory';
import { statementsOf } from '../support/statements';

/**
 * What a proxied request with expressions costs the database: its tokens read by primary key in one
 * statement (shared with other requests' reads that arrive meanwhile), and its two audit records (the tokens
 * used, the forwarded call) in one insert, before the body leaves. A change that adds a round trip to every
 * proxied request fails here, not only in the benchmark.
 */
describe('statements per proxied request', () => {
  let fx: ProxyFixture;
  let echo: TestHttpsServer;
  let key: string;
  let ids: string[];
  let numbers: string[];

  beforeAll(async () => {
    fx = await proxyFixture({ env: { JOBS_ENABLED: 'false' } });
    echo = await fx.server();
    const tenant = await fx.ctx.newTenant();
    const caller = await tokenApp(fx.ctx, tenant, [], ['token:create', 'token:use']);
    key = caller.key;
    const cards = [cardData(), cardData()];
    ids = [];
    for (const data of cards) {
      ids.push((await caller.api.create({ type: 'card', data }).expect(201)).body.id as string);
    }
    numbers = cards.map((card) => card.number);
    // Warm: leases, keys and caches are taken by the first request.
    await send();
  });
  afterAll(() => fx.close());

  const send = () =>
    fx.ctx.http
      .post('/proxy/charge')
      .set('BT-API-KEY', key)
      .set('BT-PROXY-URL', fx.url(echo))
      .send({
        cards: ids.map((id) => `{{ ${id} | json: '$.number' }}`),
        month: `{{ ${ids[0]} | json: '$.expiration_month' }}`,
      })
      .expect(200);

  it('3 expressions over 2 tokens: one primary-key read of both tokens, one insert of both records', async () => {
    let body: unknown;
    const sent = await statementsOf(async () => {
      body = (await send()).body;
    });
    expect(body).toEqual({ cards: numbers, month: 12 });
    expect(sent).toHaveLength(2);
    const [read, audit] = sent;
    // One tenant's ids in one statement (batches never mix tenants): the tenant is $1, the ids $2.
    expect(read).toMatch(/FROM unnest\(\$2::text\[\]\) WITH ORDINALITY .* tokens\.tenant_id = \$1 /s);
    expect(audit).toMatch(/INSERT INTO audit_records/);
  });
});
