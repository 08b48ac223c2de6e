import { TestContext, TestTenant } from '../support/test-app';
import {
  badLuhn,
  bankData,
  cardData,
  cardNumber,
  luhnValid,
  rule,
  tokenApp,
  TokensApi,
  ALL_TOKEN_PERMISSIONS,
  ISO_WITH_OFFSET,
} from '../support/token-factory';

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

describe('POST /tokens', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let app: { id: string; key: string; api: TokensApi };
  /** Every sensitive value this file sends, checked against the logs at the end. */
  const sensitive: string[] = [];
  const keys: string[] = [];

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    // Permissions and no rules: create/read mask on every container.
    app = await tokenApp(ctx, tenant);
    keys.push(tenant.key, app.key);
  });
  afterAll(() => ctx.close());

  describe('defaults per type', () => {
    it('a generic token: /general/high/, stringify fingerprint, no mask so no data in the masked response', async () => {
      sensitive.push('generic-secret-value');
      const res = await app.api.create({ type: 'token', data: 'generic-secret-value' }).expect(201);
      expect(res.body).toMatchObject({
        type: 'token',
        tenant_id: tenant.tenantId,
        containers: ['/general/high/'],
        fingerprint_expression: '{{ data | stringify }}',
        created_by: app.id,
      });
      expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.body.fingerprint).toMatch(BASE58);
      expect(res.body.created_at).toMatch(ISO_WITH_OFFSET);
      expect(res.body).not.toHaveProperty('data');
      expect(res.body).not.toHaveProperty('mask');
      expect(JSON.stringify(res.body)).not.toContain('generic-secret-value');
    });

    it('a card: /pci/high/, number fingerprint, masked number with month and year', async () => {
      const data = cardData({ number: '4242424242424242', expiration_month: 11, expiration_year: 2031 });
      const res = await app.api.create({ type: 'card', data }).expect(201);
      const masked = { number: 'XXXXXXXXXXXX4242', expiration_month: 11, expiration_year: 2031 };
      expect(res.body).toMatchObject({
        type: 'card',
        containers: ['/pci/high/'],
        fingerprint_expression: '{{ data.number }}',
        data: masked,
        mask: masked,
      });
    });

    it('the card mask never shows the cvc', async () => {
      const data = cardData({ cvc: '7391' });
      const res = await app.api.create({ type: 'card', data }).expect(201);
      expect(res.body.data).toEqual({
        number: `XXXXXXXXXXXX${data.number.slice(-4)}`,
        expiration_month: 12,
        expiration_year: 2030,
      });
      expect(res.text).not.toContain('7391');
    });

    it('a custom mask on a generic token is evaluated, keeping the type of a single expression', async () => {
      const text = await app.api
        .create({ type: 'token', data: 'abcdef1234', mask: '{{ data | reveal_last: 4 }}' })
        .expect(201);
      expect(text.body).toMatchObject({ data: 'XXXXXX1234', mask: 'XXXXXX1234' });
      const number = await app.api
        .create({ type: 'token', data: { n: 12, s: 'x' }, mask: { n: '{{ data.n }}' } })
        .expect(201);
      expect(number.body.data).toEqual({ n: 12 });
    });

    it('a bank: /bank/high/, account|routing fingerprint, masked account number', async () => {
      const data = bankData({ account_number: '000123456789' });
      sensitive.push(data.account_number);
      const res = await app.api.create({ type: 'bank', data }).expect(201);
      const masked = { routing_number: data.routing_number, account_number: 'XXXXXXXX6789' };
      expect(res.body).toMatchObject({
        type: 'bank',
        containers: ['/bank/high/'],
        fingerprint_expression: '{{ data.account_number }}|{{ data.routing_number }}',
        data: masked,
        mask: masked,
      });
    });

    it('accepts a 17-digit account number', async () => {
      await app.api
        .create({ type: 'bank', data: bankData({ account_number: '12345678901234567' }) })
        .expect(201);
    });
  });

  it('normalizes custom containers to lower case', async () => {
    const res = await app.api
      .create({ type: 'card', data: cardData(), containers: ['/PCI/Low/', '/Shop_1/cards-x/'] })
      .expect(201);
    expect(res.body.containers).toEqual(['/pci/low/', '/shop_1/cards-x/']);
  });

  describe('custom ids', () => {
    it('uses a given id and answers 409 for a duplicate', async () => {
      const res = await app.api.create({ id: 'order-42:card', type: 'card', data: cardData() }).expect(201);
      expect(res.body.id).toBe('order-42:card');
      await app.api.get('order-42:card').expect(200);
      const dup = await app.api.create({ id: 'order-42:card', type: 'token', data: 'x' }).expect(409);
      expect(dup.body.status).toBe(409);
    });

    it('renders an alias expression: a Luhn-valid number that differs from the card', async () => {
      const data = cardData();
      sensitive.push(data.number);
      const res = await app.api
        .create({ id: '{{ data.number | alias_card }}', type: 'card', data })
        .expect(201);
      expect(res.body.id).not.toBe(data.number);
      expect(res.body.id).toMatch(/^\d{16}$/);
      expect(luhnValid(res.body.id)).toBe(true);
      const got = await app.api.get(res.body.id).expect(200);
      expect(got.body.data.number).toBe(`XXXXXXXXXXXX${data.number.slice(-4)}`);
    });

    it('renders alias_preserve_format keeping the last four characters', async () => {
      const res = await app.api
        .create({ id: '{{ data | alias_preserve_format: 0, 4 }}', type: 'token', data: 'ABCD-efgh-1234' })
        .expect(201);
      expect(res.body.id).toMatch(/^[A-Z]{4}-[a-z]{4}-1234$/);
      expect(res.body.id).not.toBe('ABCD-efgh-1234');
    });

    it.each(['a/b/c', 'has#hash', 'q?x', 'ab', 'a b c', '{{ }}x'])(
      'rejects the id %p with 400',
      async (id) => {
        const res = await app.api.create({ id, type: 'token', data: 'x' }).expect(400);
        expect(res.body.errors).toHaveProperty(['id']);
      },
    );
  });

  describe('validation failures name the field and never echo the value', () => {
    const number = cardNumber();
    const short = cardNumber('4', 12);
    const cases: [string, () => object, string, string][] = [
      [
        'bad Luhn',
        () => ({ type: 'card', data: { number: badLuhn(number) } }),
        'data.number',
        badLuhn(number),
      ],
      ['12 digits', () => ({ type: 'card', data: { number: short } }), 'data.number', short],
      [
        'month 13',
        () => ({ type: 'card', data: { number, expiration_month: 13 } }),
        'data.expiration_month',
        number,
      ],
      [
        '2-digit year',
        () => ({ type: 'card', data: { number, expiration_year: 30 } }),
        'data.expiration_year',
        number,
      ],
      ['5-digit cvc', () => ({ type: 'card', data: { number, cvc: '98765' } }), 'data.cvc', '98765'],
      ['unknown card field', () => ({ type: 'card', data: { number, pin: '4321' } }), 'data.pin', number],
      [
        'bad ABA checksum',
        () => ({ type: 'bank', data: { routing_number: '021000022', account_number: '5550001111' } }),
        'data.routing_number',
        '5550001111',
      ],
      [
        '18-digit account',
        () => ({ type: 'bank', data: bankData({ account_number: '123456789012345678' }) }),
        'data.account_number',
        '123456789012345678',
      ],
      [
        'container /a',
        () => ({ type: 'card', data: { number }, containers: ['/a'] }),
        'containers[0]',
        number,
      ],
      [
        'unknown filter in a mask',
        () => ({ type: 'card', data: { number }, mask: { number: '{{ data.number | no_such_filter }}' } }),
        'mask.number',
        number,
      ],
      [
        'unknown filter in the fingerprint expression',
        () => ({
          type: 'card',
          data: { number },
          fingerprint_expression: '{{ data.number | no_such_filter }}',
        }),
        'fingerprint_expression',
        number,
      ],
      [
        'unknown filter in a search index',
        () => ({ type: 'card', data: { number }, search_indexes: ['{{ data.number | no_such_filter }}'] }),
        'search_indexes[0]',
        number,
      ],
      [
        'non-string metadata',
        () => ({ type: 'card', data: { number }, metadata: { k: 5 } }),
        'metadata.k',
        number,
      ],
      ['missing type', () => ({ data: { number } }), 'type', number],
      ['unknown type', () => ({ type: 'cash', data: { number } }), 'type', number],
      ['missing data', () => ({ type: 'card' }), 'data', number],
      ['missing card number', () => ({ type: 'card', data: { expiration_month: 1 } }), 'data.number', number],
    ];

    it.each(cases)('%s → 400', async (_name, body, field, secret) => {
      sensitive.push(secret);
      const res = await app.api.create(body()).expect(400);
      expect(res.body).toMatchObject({ status: 400 });
      expect(res.body.errors).toHaveProperty([field]);
      expect(res.text).not.toContain(secret);
      expect(res.text).not.toContain(number);
    });

    it('stores nothing when validation fails', async () => {
      const rows = await ctx.dataSource.query('SELECT count(*)::int AS n FROM tokens WHERE id = $1', [
        'never-stored',
      ]);
      await app.api
        .create({ id: 'never-stored', type: 'card', data: { number: badLuhn(number) } })
        .expect(400);
      const after = await ctx.dataSource.query('SELECT count(*)::int AS n FROM tokens WHERE id = $1', [
        'never-stored',
      ]);
      expect(after).toEqual(rows);
    });
  });

  it('a rules app may create only in containers where it holds token:create', async () => {
    const pciOnly = await tokenApp(ctx, tenant, [rule('/pci/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
    keys.push(pciOnly.key);
    await pciOnly.api.create({ type: 'card', data: cardData() }).expect(201);
    await pciOnly.api.create({ type: 'token', data: 'x' }).expect(403);
    await pciOnly.api.create({ type: 'card', data: cardData(), containers: ['/general/'] }).expect(403);
  });

  it('logs no sensitive value and no API key', () => {
    const logs = ctx.logs.join('');
    expect(logs.length).toBeGreaterThan(0);
    for (const value of [...sensitive, ...keys]) {
      expect(logs).not.toContain(value);
    }
  });
});
