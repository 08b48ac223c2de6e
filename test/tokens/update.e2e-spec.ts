import { TestContext, TestTenant } from '../support/test-app';
import {
  ALL_TOKEN_PERMISSIONS,
  badLuhn,
  cardData,
  cardNumber,
  rule,
  tokenApp,
  TokensApi,
} from '../support/token-factory';

describe('PATCH /tokens/<id>', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  /** Reveals on read, so tests can see what is stored. */
  let app: { id: string; key: string; api: TokensApi };

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    app = await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
  });
  afterAll(() => ctx.close());

  async function newCard(
    extra: object = {},
  ): Promise<{ id: string; number: string; body: Record<string, unknown> }> {
    const data = cardData();
    const res = await app.api.create({ type: 'card', data, ...extra }).expect(201);
    return { id: res.body.id, number: data.number, body: res.body };
  }

  it('answers 415 for application/json and for a missing content type, and changes nothing', async () => {
    const card = await newCard();
    const path = `/tokens/${card.id}`;
    const json = await ctx.http
      .patch(path)
      .set('BT-API-KEY', app.key)
      .send({ metadata: { a: 'b' } })
      .expect(415);
    expect(json.body.status).toBe(415);
    await ctx.http.patch(path).set('BT-API-KEY', app.key).expect(415);
    await ctx.http
      .patch(path)
      .set('BT-API-KEY', app.key)
      .set('Content-Type', 'text/plain')
      .send('{"metadata":{"a":"b"}}')
      .expect(415);
    const got = await app.api.get(card.id).expect(200);
    expect(got.body.metadata).toBeNull();
    expect(got.body.modified_at).toBeNull();
  });

  it('merges data: changing the month keeps the number', async () => {
    const card = await newCard();
    const res = await app.api.patch(card.id, { data: { expiration_month: 1, cvc: '123' } }).expect(200);
    expect(res.body).toMatchObject({ modified_by: app.id });
    expect(res.body.modified_at).toEqual(expect.any(String));
    const got = await app.api.get(card.id).expect(200);
    expect(got.body.data).toEqual({
      number: card.number,
      expiration_month: 1,
      expiration_year: 2030,
      cvc: '123',
    });
    await app.api.patch(card.id, { data: { cvc: null } }).expect(200);
    expect((await app.api.get(card.id).expect(200)).body.data).not.toHaveProperty('cvc');
  });

  it('merges the mask', async () => {
    const card = await newCard();
    const res = await app.api
      .patch(card.id, { mask: { number: '{{ data.number | reveal_last: 6, "*" }}' } })
      .expect(200);
    const expected = {
      number: `${'*'.repeat(10)}${card.number.slice(-6)}`,
      expiration_month: 12,
      expiration_year: 2030,
    };
    expect(res.body.mask).toEqual(expected);
    expect(res.body.data).toEqual(expected);
    await app.api.patch(card.id, { mask: { expiration_year: null } }).expect(200);
    const got = await app.api.get(card.id).expect(200);
    expect(got.body.mask).toEqual({ number: expected.number, expiration_month: 12 });
  });

  it('merges metadata, null removing a key', async () => {
    const card = await newCard({ metadata: { a: '1', b: '2' } });
    const res = await app.api.patch(card.id, { metadata: { b: null, c: '3' } }).expect(200);
    expect(res.body.metadata).toEqual({ a: '1', c: '3' });
    expect((await app.api.get(card.id).expect(200)).body.metadata).toEqual({ a: '1', c: '3' });
    await app.api.patch(card.id, { metadata: { a: 7 } }).expect(400);
  });

  it('replaces containers, search_indexes, fingerprint_expression and deduplicate_token', async () => {
    const card = await newCard({
      containers: ['/pci/high/', '/shop/'],
      search_indexes: ['{{ data.number | last4 }}', '{{ data.expiration_year }}'],
      fingerprint_expression: '{{ data.number }}-{{ data.expiration_year }}',
      deduplicate_token: true,
    });
    const res = await app.api
      .patch(card.id, {
        containers: ['/PCI/Low/'],
        search_indexes: ['{{ data.expiration_month }}'],
        fingerprint_expression: '{{ data.number }}',
        deduplicate_token: false,
      })
      .expect(200);
    expect(res.body).toMatchObject({
      containers: ['/pci/low/'],
      search_indexes: ['{{ data.expiration_month }}'],
      fingerprint_expression: '{{ data.number }}',
      deduplicate_token: false,
    });
    expect(res.body.fingerprint).not.toBe(card.body.fingerprint);
    const got = await app.api.get(card.id).expect(200);
    expect(got.body).toMatchObject({
      containers: ['/pci/low/'],
      search_indexes: ['{{ data.expiration_month }}'],
    });
    await app.api.patch(card.id, { containers: ['/a'] }).expect(400);
    await app.api.patch(card.id, { fingerprint_expression: '{{ data | nope }}' }).expect(400);
  });

  it('recomputes the fingerprint when the data changes', async () => {
    const card = await newCard();
    const other = cardNumber();
    const sameMonth = await app.api.patch(card.id, { data: { expiration_month: 3 } }).expect(200);
    expect(sameMonth.body.fingerprint).toBe(card.body.fingerprint);
    const changed = await app.api.patch(card.id, { data: { number: other } }).expect(200);
    expect(changed.body.fingerprint).not.toBe(card.body.fingerprint);
    expect(changed.body.data.number).toBe(`XXXXXXXXXXXX${other.slice(-4)}`);
    const twin = await app.api.create({ type: 'card', data: cardData({ number: other }) }).expect(201);
    expect(twin.body.fingerprint).toBe(changed.body.fingerprint);
  });

  it.each([{ id: 'new-id' }, { type: 'token' }, { created_by: 'x' }])(
    'rejects %p with 400',
    async (patch) => {
      const card = await newCard();
      const res = await app.api.patch(card.id, patch).expect(400);
      expect(res.body.errors).toHaveProperty([Object.keys(patch)[0]]);
      await app.api.get(card.id).expect(200);
    },
  );

  it('validates after merging: a bad number is a 400 and nothing changes', async () => {
    const card = await newCard({ metadata: { a: '1' } });
    const bad = badLuhn(card.number);
    const res = await app.api.patch(card.id, { data: { number: bad }, metadata: { a: '2' } }).expect(400);
    expect(res.body.errors).toHaveProperty(['data.number']);
    expect(res.text).not.toContain(bad);
    await app.api.patch(card.id, { data: { expiration_month: 13 } }).expect(400);
    await app.api.patch(card.id, { data: { unknown: 'x' } }).expect(400);
    const got = await app.api.get(card.id).expect(200);
    expect(got.body.data).toEqual({ number: card.number, expiration_month: 12, expiration_year: 2030 });
    expect(got.body.metadata).toEqual({ a: '1' });
    expect(got.body.modified_at).toBeNull();
  });

  it('answers 404 for an unknown token', async () => {
    await app.api.patch('no-such-token', { metadata: { a: 'b' } }).expect(404);
  });

  it('write responses are masked even with a reveal rule', async () => {
    const card = await newCard();
    expect(card.body.data).toEqual({
      number: `XXXXXXXXXXXX${card.number.slice(-4)}`,
      expiration_month: 12,
      expiration_year: 2030,
    });
    const res = await app.api.patch(card.id, { data: { expiration_year: 2032 } }).expect(200);
    expect(res.body.data.number).toBe(`XXXXXXXXXXXX${card.number.slice(-4)}`);
    expect(res.text).not.toContain(card.number);
  });

  it('an update matching a token the caller cannot read is no duplicate: it is saved, nothing of the original shown', async () => {
    // A: everything on every container. B: create/update on /pci/, read only on /general/.
    const appA = await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
    const appB = await tokenApp(ctx, tenant, [
      rule('/pci/', 'mask', ['token:create', 'token:update']),
      rule('/general/', 'reveal', ['token:read']),
    ]);
    const aNumber = cardNumber();
    const original = await appA.api
      .create({ type: 'card', data: cardData({ number: aNumber }), metadata: { owner: 'a' } })
      .expect(201);
    const own = await appB.api
      .create({ type: 'card', data: cardData(), metadata: { owner: 'b' } })
      .expect(201);

    const res = await appB.api
      .patch(own.body.id, {
        data: { number: aNumber },
        metadata: { owner: 'changed' },
        deduplicate_token: true,
      })
      .expect(200);
    expect(res.body.id).toBe(own.body.id);
    expect(res.body).not.toHaveProperty('_extras');
    expect(res.text).not.toContain(original.body.id);
    // B cannot read its token: the answer says where it is, nothing derived from the data
    for (const field of [
      'data',
      'metadata',
      'mask',
      'fingerprint',
      'fingerprint_expression',
      'search_indexes',
    ]) {
      expect(res.body).not.toHaveProperty(field);
    }
    expect(res.text).not.toContain(aNumber);

    const ownNow = await appA.api.get(own.body.id).expect(200);
    expect(ownNow.body.data.number).toBe(aNumber);
    expect(ownNow.body.metadata).toEqual({ owner: 'changed' });
    expect(ownNow.body.deduplicate_token).toBe(true);
    const originalNow = await appA.api.get(original.body.id).expect(200);
    expect(originalNow.body.data.number).toBe(aNumber);
    expect(originalNow.body.metadata).toEqual({ owner: 'a' });
  });

  it('a duplicate found by update is shown (masked) to a caller who can read it', async () => {
    const a = await newCard();
    const b = await newCard();
    const res = await app.api
      .patch(b.id, { data: { number: a.number }, deduplicate_token: true })
      .expect(200);
    expect(res.body).toMatchObject({ id: a.id, _extras: { deduplicated: true } });
    expect(res.body.data.number).toBe(`XXXXXXXXXXXX${a.number.slice(-4)}`);
    expect((await app.api.get(b.id).expect(200)).body.data.number).toBe(b.number);
    // without deduplicate_token the same change goes through
    const plain = await app.api.patch(b.id, { data: { number: a.number } }).expect(200);
    expect(plain.body.id).toBe(b.id);
    expect(plain.body.fingerprint).toBe(a.body.fingerprint);
  });

  it('loses no update when patches race: every accepted patch is in the final token', async () => {
    const card = await newCard();
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) => app.api.patch(card.id, { metadata: { [`k${i}`]: `v${i}` } })),
    );
    expect(responses.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    const final = (await app.api.get(card.id).expect(200)).body.metadata as Record<string, string>;
    responses.forEach((r, i) => {
      if (r.status === 200) {
        expect(final[`k${i}`]).toBe(`v${i}`);
      }
    });
    expect(responses.filter((r) => r.status === 200).length).toBeGreaterThan(0);
  });
});
