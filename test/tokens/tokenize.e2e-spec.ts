import type { Permission } from '../../src/access/permissions';
import { TestContext, TestTenant } from '../support/test-app';
import { countTokens, rule, tokenApp, TokensApi } from '../support/token-factory';

const ALL: Permission[] = ['token:create', 'token:read', 'token:search', 'token:use'];

describe('POST /tokenize', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let key: string;
  let api: TokensApi;
  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    ({ key, api } = await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL)], ['token:create']));
  });
  afterAll(() => ctx.close());

  const reveal = async (id: string): Promise<unknown> => (await api.get(id).expect(200)).body.data;

  it('keeps the shape of nested objects and arrays of mixed leaves', async () => {
    const body = {
      name: 'Jane Doe',
      card: {
        type: 'card',
        data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2031 },
      },
      list: ['a', 7, true, null, { nested: ['deep'] }],
    };
    const res = await api.tokenize(body).expect(200);
    expect(typeof res.body.name).toBe('string');
    expect(res.body.card).toMatchObject({ type: 'card', data: { number: 'XXXXXXXXXXXX4242' } });
    expect(res.body.list[3]).toBeNull();
    expect(await reveal(res.body.name)).toBe('Jane Doe');
    expect(await reveal(res.body.list[1])).toBe(7);
    expect(await reveal(res.body.list[2])).toBe(true);
    expect(await reveal(res.body.list[4].nested[0])).toBe('deep');
    expect(await reveal(res.body.card.id)).toMatchObject({ number: '4242424242424242' });
  });

  it('stores every field of a batch as POST /tokens stores one token', async () => {
    const definition = (number: string) => ({
      type: 'card',
      data: { number, expiration_month: 12, expiration_year: 2031 },
      containers: ['/pci/acme/', '/general/'],
      metadata: { customer: 'Acme "Quoted" \\ Inc', tier: 'gold' },
      search_indexes: ['{{ data.number | last4 }}'],
      fingerprint_expression: '{{ data.number }}',
      mask: { number: '{{ data.number | reveal_last: 4 }}', note: 'x,{y}"z' },
      expires_at: '2031-12-31T23:59:59.123Z',
    });
    const batch = await api.tokenize({ a: definition('4242424242424242'), b: 'text' }).expect(200);
    const single = await api.create(definition('5555555555554444')).expect(201);
    const batched = (await api.get(batch.body.a.id).expect(200)).body;
    const alone = (await api.get(single.body.id).expect(200)).body;
    const same = (t: Record<string, unknown>) => {
      const { id: _id, fingerprint: _f, data: _d, mask: _m, created_at: _c, ...rest } = t;
      return rest;
    };
    expect(same(batched)).toEqual(same(alone));
    expect(batched.mask).toEqual({ number: 'XXXXXXXXXXXX4242', note: 'x,{y}"z' });
    expect(batched.data.number).toBe('4242424242424242');
    expect(batched.expires_at).toBe(alone.expires_at);
    expect(await reveal(batch.body.b)).toBe('text');
  });

  it('answers 400 and stores nothing when a batch holds a NUL the database cannot store', async () => {
    const before = await countTokens(ctx, tenant.tenantId);
    for (const a of [
      { type: 'token', data: 'x', metadata: { k: 'a\u0000b' } },
      { type: 'token', data: 'x', fingerprint_expression: '{{ data }}\u0000' },
      { type: 'token', data: 'x', search_indexes: ['{{ data }}'], containers: ['/a\u0000/'] },
    ]) {
      const res = await api.tokenize({ a, b: 'second leaf' });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body.status).toBe(res.status);
    }
    expect(await countTokens(ctx, tenant.tenantId)).toBe(before);
  });

  it('answers 409 and stores nothing when a definition takes an id in use, or one id comes twice', async () => {
    await api.create({ id: 'tokenize-taken', type: 'token', data: 'first' }).expect(201);
    const before = await countTokens(ctx, tenant.tenantId);
    for (const body of [
      { a: 'new leaf', b: { id: 'tokenize-taken', type: 'token', data: 'second' } },
      [
        { id: 'tokenize-twice', type: 'token', data: 'x' },
        { id: 'tokenize-twice', type: 'token', data: 'y' },
      ],
    ]) {
      const res = await api.tokenize(body);
      expect([res.status, res.body.status]).toEqual([409, 409]);
    }
    expect(await countTokens(ctx, tenant.tenantId)).toBe(before);
    expect(await reveal('tokenize-taken')).toBe('first');
  });

  it('accepts a top-level array and a top-level string', async () => {
    const arr = await api.tokenize(['x', 'y']).expect(200);
    expect(arr.body).toHaveLength(2);
    expect(await reveal(arr.body[1])).toBe('y');
    const str = await ctx.http
      .post('/tokenize')
      .set('BT-API-KEY', key)
      .set('Content-Type', 'application/json')
      .send('"top"')
      .expect(200);
    expect(typeof str.body).toBe('string');
    expect(await reveal(str.body as string)).toBe('top');
  });

  it('creates nothing when one definition is invalid and names its path', async () => {
    const before = await countTokens(ctx, tenant.tenantId);
    const body: Record<string, unknown> = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`f${i}`, `v${i}`]),
    );
    body.bad = { type: 'card', data: { number: '4242424242424241' } };
    const res = await api.tokenize(body).expect(400);
    expect(Object.keys(res.body.errors)).toEqual(['bad.data.number']);
    expect(JSON.stringify(res.body)).not.toContain('4242424242424241');
    expect(await countTokens(ctx, tenant.tenantId)).toBe(before);
  });

  it('checks token:create on every destination container', async () => {
    const general = await tokenApp(ctx, tenant, [rule('/general/', 'mask', ['token:create'])], []);
    const before = await countTokens(ctx, tenant.tenantId);
    await general.api
      .tokenize({ a: 'ok', card: { type: 'card', data: { number: '4242424242424242' } } })
      .expect(403);
    expect(await countTokens(ctx, tenant.tenantId)).toBe(before);
  });

  it('refuses more than TOKENIZE_MAX_TOKENS leaves', async () => {
    await api.tokenize(Array.from({ length: 101 }, (_, i) => `v${i}`)).expect(400);
  });

  it('finds tokens by search index, id and metadata, never by unindexed values', async () => {
    const created = await api
      .create({
        type: 'card',
        data: { number: '4000056655665556', expiration_month: 3, expiration_year: 2032 },
        search_indexes: ['{{ data.number }}', '{{ data.number | last4 }}'],
        metadata: { customer: 'Acme' },
      })
      .expect(201);
    const search = async (query: string): Promise<string[]> =>
      (await api.search({ query }).expect(200)).body.data.map((t: { id: string }) => t.id);
    expect(await search('data:4000056655665556')).toEqual([created.body.id]);
    expect(await search('data:5556 AND metadata.customer:acme')).toEqual([created.body.id]);
    expect(await search(`id:${created.body.id as string}`)).toEqual([created.body.id]);
    expect(await search('data:2032')).toEqual([]);
    expect(await search('data:5556 metadata.customer:other')).toEqual([]);
    await api.search({ query: 'bogus:1' }).expect(400);
  });
});
