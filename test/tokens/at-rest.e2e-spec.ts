import { TestContext, TestTenant } from '../support/test-app';
import {
  ALL_TOKEN_PERMISSIONS,
  badLuhn,
  bankData,
  cardData,
  rule,
  tokenApp,
  TokensApi,
} from '../support/token-factory';

/** Every way a value could sit in a column: as JSON text, as UTF-8 in a bytea, or hex-encoded. */
function renderings(value: unknown): string[] {
  if (Buffer.isBuffer(value)) {
    return [
      value.toString('utf8'),
      value.toString('hex'),
      value.toString('latin1'),
      value.toString('base64'),
    ];
  }
  if (value instanceof Date) {
    return [value.toISOString()];
  }
  return [typeof value === 'string' ? value : (JSON.stringify(value) ?? '')];
}

describe('token data at rest, in errors and in logs', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let revealer: { id: string; key: string; api: TokensApi };
  const sensitive: string[] = [];

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    revealer = await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
  });
  afterAll(() => ctx.close());

  it('no column of any table holds the card number, account number or cvc in clear', async () => {
    const card = cardData({ cvc: '8317' });
    const bank = bankData();
    sensitive.push(card.number, bank.account_number);
    const created = await revealer.api
      .create({
        type: 'card',
        data: card,
        metadata: { purpose: 'at-rest' },
        search_indexes: ['{{ data.number }}', '{{ data.number | last4 }}'],
        fingerprint_expression: '{{ data.number }}',
      })
      .expect(201);
    await revealer.api.create({ type: 'bank', data: bank }).expect(201);
    await revealer.api.patch(created.body.id, { data: { expiration_month: 4 } }).expect(200);
    expect((await revealer.api.get(created.body.id).expect(200)).body.data.number).toBe(card.number);

    const needles = [card.number, bank.account_number, `"cvc":"${card.cvc}"`];
    const hexNeedles = needles.map((n) => Buffer.from(n, 'utf8').toString('hex'));
    const tables: { table_name: string }[] = await ctx.dataSource.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    );
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining(['tokens', 'tenants', 'applications']),
    );
    let scanned = 0;
    for (const { table_name } of tables) {
      const rows: Record<string, unknown>[] = await ctx.dataSource.query(`SELECT * FROM "${table_name}"`);
      for (const row of rows) {
        scanned++;
        const text = [JSON.stringify(row), ...Object.values(row).flatMap(renderings)].join('\n');
        for (const needle of [...needles, ...hexNeedles]) {
          expect({ table: table_name, found: text.includes(needle) }).toEqual({
            table: table_name,
            found: false,
          });
        }
      }
    }
    expect(scanned).toBeGreaterThan(3);
    const [row] = await ctx.dataSource.query('SELECT data FROM tokens WHERE tenant_id = $1 AND id = $2', [
      tenant.tenantId,
      created.body.id,
    ]);
    expect(Buffer.isBuffer(row.data)).toBe(true);
    expect(row.data.length).toBeGreaterThan(card.number.length);
  });

  it('sends no ETag: a hash of a revealed body would be a brute-forceable hash of the card', async () => {
    const data = cardData();
    sensitive.push(data.number);
    const id = (await revealer.api.create({ type: 'card', data }).expect(201)).body.id;
    const res = await revealer.api.get(id).expect(200);
    expect(res.body.data.number).toBe(data.number);
    expect(res.headers.etag).toBeUndefined();
  });

  it('a ciphertext copied onto another token fails to decrypt: 5xx without data or stack', async () => {
    const a = cardData();
    const b = cardData();
    sensitive.push(a.number, b.number);
    const tokenA = (await revealer.api.create({ type: 'card', data: a }).expect(201)).body.id;
    const tokenB = (await revealer.api.create({ type: 'card', data: b }).expect(201)).body.id;
    await ctx.dataSource.query(
      'UPDATE tokens SET data = (SELECT data FROM tokens WHERE tenant_id = $1 AND id = $2) WHERE tenant_id = $1 AND id = $3',
      [tenant.tenantId, tokenA, tokenB],
    );

    const masker = await tokenApp(ctx, tenant, [rule('/', 'mask', ALL_TOKEN_PERMISSIONS)]);
    const attempts = [
      await revealer.api.get(tokenB),
      await masker.api.get(tokenB),
      await revealer.api.patch(tokenB, { metadata: { k: 'v' } }),
    ];
    for (const res of attempts) {
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(res.body).toMatchObject({ status: res.status, title: expect.any(String) });
      expect(res.text).not.toContain(a.number);
      expect(res.text).not.toContain(b.number);
      expect(res.text).not.toContain('XXXX'); // not even masked data
      expect(res.text).not.toMatch(/stack|\.ts:\d+|at .*\(/i);
    }
    // a list still answers, showing the broken token without any data
    const list = await revealer.api.list(`?id=${tokenB}`).expect(200);
    expect(list.body.data).toEqual([expect.not.objectContaining({ data: expect.anything() })]);
    expect(list.text).not.toContain(a.number);
    expect(list.text).not.toContain(b.number);
    // the token it came from still opens; the broken one can still be read redacted and deleted
    expect((await revealer.api.get(tokenA).expect(200)).body.data).toEqual(a);
    const redacter = await tokenApp(ctx, tenant, [rule('/', 'redact', ALL_TOKEN_PERMISSIONS)]);
    await redacter.api.get(tokenB).expect(200);
    await revealer.api.delete(tokenB).expect(204);
  });

  it('a token from another tenant cannot be opened with this tenant’s keys', async () => {
    const other = await ctx.newTenant('Other');
    const otherApp = await tokenApp(ctx, other, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
    const data = cardData();
    sensitive.push(data.number);
    const foreign = (await otherApp.api.create({ type: 'card', data }).expect(201)).body.id;
    const mine = (await revealer.api.create({ type: 'card', data: cardData() }).expect(201)).body.id;
    await ctx.dataSource.query(
      'UPDATE tokens SET data = (SELECT data FROM tokens WHERE tenant_id = $1 AND id = $2) WHERE tenant_id = $3 AND id = $4',
      [other.tenantId, foreign, tenant.tenantId, mine],
    );
    const res = await revealer.api.get(mine);
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(res.text).not.toContain(data.number);
  });

  it('validation failures and reveals leave no sensitive value in the logs', async () => {
    const card = cardData();
    sensitive.push(card.number, badLuhn(card.number));
    await revealer.api.create({ type: 'card', data: { number: badLuhn(card.number) } }).expect(400);
    await revealer.api.create({ type: 'card', data: { ...card, expiration_month: 13 } }).expect(400);
    const ok = await revealer.api.create({ type: 'card', data: card, metadata: { m: 'n' } }).expect(201);
    await revealer.api.get(ok.body.id).expect(200);
    await revealer.api.list('?metadata.m=n').expect(200);
    await revealer.api.patch(ok.body.id, { data: { number: badLuhn(card.number) } }).expect(400);
    // a body that is not even JSON must not be echoed either
    await ctx.http
      .post('/tokens')
      .set('BT-API-KEY', revealer.key)
      .set('Content-Type', 'application/json')
      .send(`{"type":"card","data":{"number":"${card.number}"`)
      .expect(400)
      .expect((res) => expect(res.text).not.toContain(card.number));
  });

  it('logs nothing sensitive: no card or account number and no API key', () => {
    const logs = ctx.logs.join('');
    expect(logs).toContain('"statusCode":500');
    for (const value of [...sensitive, revealer.key, tenant.key]) {
      expect(logs).not.toContain(value);
    }
  });
});
