import { AuditChain } from '../../src/audit/audit-chain.service';
import { TenantKeysService } from '../../src/crypto/tenant-keys.service';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp, TokensApi } from '../support/token-factory';
import { statementsOf } from '../support/statements';

/**
 * A write's rows (the tokens, their webhook outbox rows and the audit record) go to the database as one
 * statement, one round trip, with no transaction of its own; a /tokenize of N leaves as well, its N tokens
 * in one multi-row INSERT. These counts are what the write path costs the database: a change that adds a
 * round trip to every create fails here, not only in the benchmark.
 */
describe('statements per write', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: TokensApi;
  beforeAll(async () => {
    // No scheduled jobs: the sealer's own statements would mix with the request's.
    ctx = await TestContext.create({ env: { JOBS_ENABLED: 'false' } });
    tenant = await ctx.newTenant();
    ({ api } = await tokenApp(
      ctx,
      tenant,
      [rule('/', 'reveal', ['token:create', 'token:read'])],
      ['token:create'],
    ));
    // A subscriber, so every create also writes an outbox row (nothing delivers it: no jobs run).
    await ctx.dataSource.query(
      `INSERT INTO webhooks (tenant_id, id, name, url, events, status, secret)
       VALUES ($1, gen_random_uuid(), 'statements', 'https://hooks.example.test/', '{token.created}', 'enabled', '\\x00')`,
      [tenant.tenantId],
    );
    // Warm: leases, keys and caches are taken by the first requests.
    await api.create({ type: 'card', data: cardData() }).expect(201);
    await api.tokenize(['warm']).expect(200);
  });
  afterAll(() => ctx.close());

  const deliveries = async (): Promise<number> =>
    (
      await ctx.dataSource.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1', [
        tenant.tenantId,
      ])
    )[0].n as number;

  it('a card create is one statement: its token, outbox and audit rows together', async () => {
    const outbox = await deliveries();
    const sent = await statementsOf(() => api.create({ type: 'card', data: cardData() }).expect(201));
    expect(sent).toHaveLength(1);
    expect(await deliveries()).toBe(outbox + 1);
    const [statement] = sent;
    expect(statement).toMatch(/^WITH /);
    expect(statement).toMatch(/INSERT INTO tokens/);
    expect(statement).toMatch(/INSERT INTO webhook_deliveries/);
    expect(statement).toMatch(/INSERT INTO audit_records/);
  });

  it('a tokenize of 100 leaves is one statement: one multi-row INSERT of the tokens and one audit record', async () => {
    const leaves = Array.from({ length: 100 }, (_, i) => `leaf ${i}`);
    let ids: string[] = [];
    const outbox = await deliveries();
    const sent = await statementsOf(async () => {
      ids = (await api.tokenize(leaves).expect(200)).body as string[];
    });
    expect(sent).toHaveLength(1);
    expect(sent[0].match(/INSERT INTO tokens/g)).toHaveLength(1);
    // Leaves differ only in id, data and fingerprint: those per token, the rest once.
    expect(sent[0]).toMatch(/string_to_array/);
    expect(sent[0].match(/INSERT INTO audit_records/g)).toHaveLength(1);
    expect(new Set(ids).size).toBe(100);
    const [{ n }] = await ctx.dataSource.query(
      'SELECT count(*)::int AS n FROM tokens WHERE tenant_id = $1 AND id = ANY($2)',
      [tenant.tenantId, ids],
    );
    expect(n).toBe(100);
    // The tenant, author and time go once for the whole statement: every row has them.
    const [who] = await ctx.dataSource.query(
      `SELECT count(DISTINCT created_at)::int AS times, count(DISTINCT created_by)::int AS authors,
         bool_and(created_by IS NOT NULL AND created_at > now() - interval '1 hour') AS set
       FROM tokens WHERE tenant_id = $1 AND id = ANY($2)`,
      [tenant.tenantId, ids],
    );
    expect(who).toEqual({ times: 1, authors: 1, set: true });
    expect(await deliveries()).toBe(outbox + 100);
  });

  it('a tokenize of 100 leaves looks the tenant keys up once, and fingerprints each leaf as a create does', async () => {
    const keys = ctx.get(TenantKeysService);
    const active = jest.spyOn(keys, 'activeDataKey');
    const hmac = jest.spyOn(keys, 'hmacKey');
    const leaves = Array.from({ length: 100 }, (_, i) => `keyed ${i}`);
    let ids: string[];
    try {
      ids = (await api.tokenize(leaves).expect(200)).body as string[];
      expect(active).toHaveBeenCalledTimes(1);
      expect(hmac).toHaveBeenCalledTimes(1);
    } finally {
      active.mockRestore();
      hmac.mockRestore();
    }
    const single = (await api.create({ type: 'token', data: 'keyed 42' }).expect(201)).body.id as string;
    // The same source through the expression engine (the default expression is computed without it).
    const rendered = (
      await api
        .create({ type: 'token', data: 'keyed 42', fingerprint_expression: '{{ data | json_stringify }}' })
        .expect(201)
    ).body.id as string;
    const rows: { id: string; fingerprint: string }[] = await ctx.dataSource.query(
      'SELECT id, fingerprint FROM tokens WHERE tenant_id = $1 AND id = ANY($2)',
      [tenant.tenantId, [ids[42], ids[7], single, rendered]],
    );
    const fingerprint = (id: string): string | undefined => rows.find((r) => r.id === id)?.fingerprint;
    expect(fingerprint(ids[42])).toBe(fingerprint(single));
    expect(fingerprint(ids[42])).toBe(fingerprint(rendered));
    expect(fingerprint(ids[7])).not.toBe(fingerprint(single));
  });

  it('the record of a 100-leaf tokenize names every token and is chained once, the chain intact', async () => {
    const leaves = Array.from({ length: 100 }, (_, i) => `chained ${i}`);
    const ids = (await api.tokenize(leaves).expect(200)).body as string[];
    const records: { id: string; token_ids: string[] }[] = await ctx.dataSource.query(
      `SELECT id, token_ids FROM audit_records WHERE tenant_id = $1 AND operation = 'tokenize' AND $2 = ANY(token_ids)`,
      [tenant.tenantId, ids[0]],
    );
    expect(records).toHaveLength(1);
    expect([...records[0].token_ids].sort()).toEqual([...ids].sort());
    const chain = ctx.get(AuditChain);
    await chain.sealAll();
    const links: { n: number }[] = await ctx.dataSource.query(
      'SELECT count(*)::int AS n FROM audit_links WHERE tenant_id = $1 AND record_id = $2',
      [tenant.tenantId, records[0].id],
    );
    expect(links[0].n).toBe(1);
    expect(await chain.verify(tenant.tenantId)).toBeNull();
  });

  it('a tokenize whose leaf k cannot be written writes nothing: no token, record or outbox row', async () => {
    const taken = (await api.create({ type: 'token', data: 'first' }).expect(201)).body.id as string;
    const before: { tokens: number; records: number; deliveries: number }[] = await ctx.dataSource.query(
      `SELECT (SELECT count(*)::int FROM tokens WHERE tenant_id = $1) AS tokens,
         (SELECT count(*)::int FROM audit_records WHERE tenant_id = $1) AS records,
         (SELECT count(*)::int FROM webhook_deliveries WHERE tenant_id = $1) AS deliveries`,
      [tenant.tenantId],
    );
    const body = Array.from({ length: 50 }, (_, i) =>
      i === 37 ? { type: 'token', id: taken, data: 'collides' } : `leaf ${i}`,
    );
    await api.tokenize(body).expect(409);
    expect(before[0].deliveries).toBeGreaterThan(0);
    const after = await ctx.dataSource.query(
      `SELECT (SELECT count(*)::int FROM tokens WHERE tenant_id = $1) AS tokens,
         (SELECT count(*)::int FROM audit_records WHERE tenant_id = $1) AS records,
         (SELECT count(*)::int FROM webhook_deliveries WHERE tenant_id = $1) AS deliveries`,
      [tenant.tenantId],
    );
    expect(after).toEqual(before);
  });
});
