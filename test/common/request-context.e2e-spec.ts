import { auditRows, eventually } from '../support/audit';
import { TestContext, TestTenant } from '../support/test-app';
import { rule, tokenApp } from '../support/token-factory';

/** What rides on a request's one context (src/common/request-context.ts), under concurrent requests. */
describe('the request context behind a trusted proxy', () => {
  const TOKEN = 'operator-metrics-token-0123456789abcdef';
  let ctx: TestContext;
  let tenant: TestTenant;
  let key: string;

  /** A search index of about 8,000 work units (a loop of `n` empty iterations); the request's budget is 50,000. */
  const index = (n: number): string => `{% for i in (1..${n}) %}{% endfor %}i${n}`;
  const indexes = (count: number, from: number): string[] =>
    Array.from({ length: count }, (_, i) => index(from + i));

  const create = (traceId: string, client: string, body: object) =>
    ctx.http
      .post('/tokens')
      .set('BT-API-KEY', key)
      .set('BT-TRACE-ID', traceId)
      .set('X-Forwarded-For', `192.0.2.250, ${client}`)
      .send(body);

  /**
   * `create`, sent again (twice at most) when the render clock refused it: on a starved CPU the clock can run
   * out before the work does. A budget shared between requests runs out of work, which is never retried.
   */
  async function createWithinWork(traceId: string, client: string, body: object) {
    let res = await create(traceId, client, body);
    for (let retry = 0; retry < 2 && /took too long/.test(JSON.stringify(res.body.errors ?? {})); retry++) {
      res = await create(traceId, client, body);
    }
    return res;
  }

  beforeAll(async () => {
    ctx = await TestContext.create({ env: { TRUST_PROXY: '127.0.0.1,::1', METRICS_TOKEN: TOKEN } });
    tenant = await ctx.newTenant();
    key = (await tokenApp(ctx, tenant, [rule('/', 'reveal', ['token:create'])])).key;
  });
  afterAll(() => ctx.close());

  it('gives concurrent requests each their own budget, id and client address', async () => {
    const sent = Array.from({ length: 6 }, (_, i) => ({
      traceId: `concurrent-${i}`,
      client: `203.0.113.${i + 1}`,
      // Five indexes use 80 % of one request's budget: two requests sharing one would refuse.
      body: { type: 'token', data: `value ${i}`, search_indexes: indexes(5, 8000 + 10 * i) },
    }));
    const answers = await Promise.all(sent.map((s) => createWithinWork(s.traceId, s.client, s.body)));
    expect(answers.map((a) => [a.status, a.body.errors])).toEqual(sent.map(() => [201, undefined]));
    expect(answers.map((a) => a.headers['bt-trace-id'])).toEqual(sent.map((s) => s.traceId));
    const rows = await auditRows(ctx, tenant.tenantId);
    for (const [i, answer] of answers.entries()) {
      const record = rows.find((r) => r.operation === 'create' && r.entity_id === answer.body.id);
      expect([record?.request_id, record?.remote_address]).toEqual([sent[i].traceId, sent[i].client]);
    }
  });

  it('still bounds the expressions of one request by its budget', async () => {
    const res = await create('over-budget', '203.0.113.9', {
      type: 'token',
      data: 'value',
      search_indexes: indexes(7, 9000),
    });
    expect(res.status).toBe(400);
  });

  it('records a refused request in the audit trail, the metrics and the log, with its id and client', async () => {
    const created = await create('to-refuse', '203.0.113.20', { type: 'token', data: 'kept' }).expect(201);
    const refused = await ctx.http
      .get(`/tokens/${created.body.id}`)
      .set('BT-API-KEY', key)
      .set('BT-TRACE-ID', 'refused-read')
      .set('X-Forwarded-For', '203.0.113.21');
    expect(refused.status).toBe(403);
    const denied = await eventually(async () => {
      const rows = await auditRows(ctx, tenant.tenantId);
      return rows.find((r) => r.outcome === 'denied' && r.request_id === 'refused-read') ?? null;
    });
    expect([denied.operation, denied.entity_id, denied.remote_address]).toEqual([
      'get /tokens/:id',
      created.body.id,
      '203.0.113.21',
    ]);
    const metrics = await ctx.http.get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(200);
    expect(metrics.text).toMatch(
      /token_vault_http_request_duration_seconds_count\{method="GET",route="\/tokens\/:id",status="403"\} 1/,
    );
    const line = ctx.logs
      .map((l) => JSON.parse(l))
      .find((l) => l.req?.id === 'refused-read' && l.res !== undefined);
    expect(line).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { method: 'GET', path: '/tokens/[id]', headers: { 'bt-api-key': '[redacted]' } },
      res: { statusCode: 403 },
      responseTime: expect.any(Number),
    });
    expect(JSON.stringify(line)).not.toContain(created.body.id);
  });
});
