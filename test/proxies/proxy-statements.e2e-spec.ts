import { auditRows } from '../support/audit';
import { TestHttpsServer } from '../support/https-test-server';
import { expectProxyError, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp } from '../support/token-factory';
import { statementsOf } from '../support/statements';

/**
 * What a proxied request with expressions costs the database. A caller whose token:use transform is the same
 * on every container (a rule-less application, or a first rule naming `/`) reads its tokens and writes its two
 * audit records (the tokens used, the forwarded call) in one statement, before the body leaves; other callers
 * read (one statement shared with other requests' reads that arrive meanwhile), then insert both records. A
 * change that adds a round trip to every proxied request fails here, not only in the benchmark.
 */
describe('statements per proxied request', () => {
  let fx: ProxyFixture;
  let echo: TestHttpsServer;
  let tenant: TestTenant;
  let key: string;
  let ids: string[];
  let numbers: string[];

  beforeAll(async () => {
    fx = await proxyFixture({ env: { JOBS_ENABLED: 'false' } });
    echo = await fx.server();
    tenant = await fx.ctx.newTenant();
    const caller = await tokenApp(fx.ctx, tenant, [], ['token:create', 'token:use', 'token:delete']);
    key = caller.key;
    const cards = [cardData(), cardData()];
    ids = [];
    for (const data of cards) {
      ids.push((await caller.api.create({ type: 'card', data }).expect(201)).body.id as string);
    }
    numbers = cards.map((card) => card.number);
    // Warm: leases, keys and caches are taken by the first request.
    await send(key, body(ids)).expect(200);
  });
  afterAll(() => fx.close());

  const body = (tokens: string[]) => ({
    cards: tokens.map((id) => `{{ ${id} | json: '$.number' }}`),
    month: `{{ ${tokens[0]} | json: '$.expiration_month' }}`,
  });
  const send = (apiKey: string, payload: object) =>
    fx.ctx.http
      .post('/proxy/charge')
      .set('BT-API-KEY', apiKey)
      .set('BT-PROXY-URL', fx.url(echo))
      .send(payload);

  /** The records written meanwhile, by operation and outcome (records of one statement share their time). */
  const recordsDuring = async (work: () => Promise<unknown>): Promise<string[]> => {
    const before = (await auditRows(fx.ctx, tenant.tenantId)).map((r) => r.id);
    await work();
    return (await auditRows(fx.ctx, tenant.tenantId))
      .filter((r) => !before.includes(r.id))
      .map((r) => `${r.operation} ${r.outcome}: ${r.message}`)
      .sort();
  };

  /** A caller whose transform depends on the container: a rule on /pci/ before the one on /. */
  const containerDependent = async (): Promise<string> => {
    const app = await tokenApp(
      fx.ctx,
      tenant,
      [rule('/pci/', 'mask', ['token:use']), rule('/', 'reveal', ['token:use'], 2)],
      ['token:use'],
    );
    await send(app.key, body(ids)).expect(200);
    return app.key;
  };

  it('3 expressions over 2 tokens, a rule-less caller: one statement reads both tokens and writes both records', async () => {
    let answer: unknown;
    const sent = await statementsOf(async () => {
      answer = (await send(key, body(ids)).expect(200)).body;
    });
    expect(answer).toEqual({ cards: numbers, month: 12 });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/JOIN tokens ON tokens\.tenant_id = \$1 /);
    expect(sent[0]).toMatch(/INSERT INTO audit_records/);
    // Data references only: the statement reads what presenting data needs, not the whole token.
    expect(sent[0]).toMatch(/"data" AS "data", "mask" AS "mask"/);
    expect(sent[0]).not.toMatch(/"metadata" AS "metadata"/);
    const written = await recordsDuring(() => send(key, body(ids)).expect(200));
    expect(written).toEqual([
      `detokenize success: Tokens used: ${ids[0]} (reveal), ${ids[1]} (reveal)`,
      'proxy success: Request forwarded (POST)',
    ]);
  });

  it('a `token:` reference reads the whole token in the same one statement', async () => {
    let answer: { whole: { id: string; type: string; data: { number: string } }; month: unknown } | undefined;
    const sent = await statementsOf(async () => {
      answer = (
        await send(key, {
          whole: `{{ token: ${ids[0]} }}`,
          month: `{{ ${ids[1]} | json: '$.expiration_month' }}`,
        }).expect(200)
      ).body;
    });
    expect(answer?.whole).toMatchObject({ id: ids[0], type: 'card', data: { number: numbers[0] } });
    expect(answer?.month).toBe(12);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/"metadata" AS "metadata"/);
    expect(sent[0]).toMatch(/INSERT INTO audit_records/);
  });

  it('a caller whose transform depends on the containers reads, then inserts both records', async () => {
    const dependent = await containerDependent();
    const sent = await statementsOf(() => send(dependent, body(ids)).expect(200));
    expect(sent).toHaveLength(2);
    const [read, audit] = sent;
    // One tenant's ids in one statement (batches never mix tenants): the tenant is $1, the ids $2.
    expect(read).toMatch(/FROM unnest\(\$2::text\[\]\) WITH ORDINALITY .* tokens\.tenant_id = \$1 /s);
    expect(audit).toMatch(/INSERT INTO audit_records/);
  });

  it('writes no record, and sends nothing, when a referenced token is unknown, expired or deleted', async () => {
    const owner = await tokenApp(fx.ctx, tenant, [], ['token:create', 'token:delete']);
    const expired = (await owner.api.create({ type: 'card', data: cardData() }).expect(201)).body
      .id as string;
    await fx.ctx.dataSource.query(
      `UPDATE tokens SET expires_at = now() - interval '1 minute' WHERE tenant_id = $1 AND id = $2`,
      [tenant.tenantId, expired],
    );
    const deleted = (await owner.api.create({ type: 'card', data: cardData() }).expect(201)).body
      .id as string;
    await owner.api.delete(deleted).expect(204);
    const dependent = await containerDependent();
    const requests = echo.requests;
    for (const caller of [key, dependent]) {
      for (const gone of ['no-such-token', expired, deleted]) {
        const written = await recordsDuring(async () => {
          const res = await send(caller, body([ids[0], gone, ids[1]]));
          expect(expectProxyError(res, 400).detail).toBe('Token expressions refer to 1 unknown token(s).');
        });
        expect(written).toEqual([]);
      }
    }
    expect(echo.requests).toBe(requests);
  });

  it('a request refused after its records were written (an expression that cannot be rendered) says so', async () => {
    const dependent = await containerDependent();
    const requests = echo.requests;
    for (const [caller, transform] of [
      [key, 'reveal'],
      [dependent, 'mask'],
    ]) {
      const written = await recordsDuring(async () => {
        const res = await send(caller, { n: `{{ ${ids[0]} | json: '$.number' | no_such_filter }}` });
        expectProxyError(res, 400);
      });
      expect(written).toEqual([
        `detokenize success: Tokens used: ${ids[0]} (${transform})`,
        'proxy failed: Request refused before forwarding (POST): 400',
        'proxy success: Request forwarded (POST)',
      ]);
    }
    expect(echo.requests).toBe(requests);
  });

  it('falls back to read, then record, when the one statement fails, and forwards nothing unrecorded', async () => {
    const requests = echo.requests;
    const logged = fx.ctx.logs.length;
    await fx.ctx.dataSource.query('ALTER TABLE audit_records RENAME TO audit_records_broken');
    try {
      expectProxyError(await send(key, body(ids)), 503);
    } finally {
      await fx.ctx.dataSource.query('ALTER TABLE audit_records_broken RENAME TO audit_records');
    }
    expect(echo.requests).toBe(requests);
    const fallback = fx.ctx.logs.slice(logged).filter((line) => line.includes('the audited read failed'));
    expect(fallback.map((line) => JSON.parse(line).err)).toEqual([{ code: '42P01' }]);
    await send(key, body(ids)).expect(200);
  });
});
