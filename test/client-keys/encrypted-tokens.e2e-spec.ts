import { randomUUID } from 'node:crypto';
import { encryptTo, headerOf, withHeader } from '../support/client-encryption';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp, TokensApi } from '../support/token-factory';

interface Key {
  key_id: string;
  public_key_pem: string;
}

/** Issue 41 item 3: `encrypted` on POST /tokens and /tokenize, opened with the tenant's client encryption key. */
describe('tokens sent encrypted to a client encryption key', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let key: Key;
  let api: TokensApi;
  const card = cardData();

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant('Encrypted');
    key = await newKey(tenant);
    api = (await tokenApp(ctx, tenant, [rule('/', 'reveal', ['token:create', 'token:read'])])).api;
  });
  afterAll(() => ctx.close());

  async function newKey(of: TestTenant, body: object = {}): Promise<Key> {
    return (await ctx.http.post('/keys').set('BT-API-KEY', of.key).send(body).expect(201)).body as Key;
  }
  const encrypt = (data: unknown, header: Record<string, unknown> = {}, to: Key = key) =>
    encryptTo(to.public_key_pem, to.key_id, data, header);

  /** A refused create: 400 on `encrypted`, the message never quoting the data. */
  async function refused(body: object, message: RegExp, path = 'encrypted'): Promise<void> {
    const res = await api.create({ type: 'card', ...body });
    expect(res.status).toBe(400);
    expect(res.body.errors[path]).toEqual([expect.stringMatching(message)]);
    expect(JSON.stringify(res.body)).not.toContain(card.number);
  }

  it('stores the decrypted data exactly as if it had been sent in clear', async () => {
    const res = await api.create({
      type: 'card',
      encrypted: await encrypt(card),
      metadata: { via: 'browser' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: 'card', metadata: { via: 'browser' } });
    expect(JSON.stringify(res.body)).not.toContain('encrypted');
    expect((await api.get(res.body.id).expect(200)).body.data).toEqual(card);
    const clear = await api.create({ type: 'card', data: card }).expect(201);
    expect(res.body.fingerprint).toBe(clear.body.fingerprint);
  });

  it('deduplicates, and replays on the same idempotency key, as a clear create does', async () => {
    const data = cardData();
    const clear = await api.create({ type: 'card', data, deduplicate_token: true }).expect(201);
    const body = { type: 'card', encrypted: await encrypt(data), deduplicate_token: true };
    expect((await api.create(body)).body.id).toBe(clear.body.id);
    const app = await tokenApp(ctx, tenant, [rule('/', 'reveal', ['token:create'])]);
    const once = { type: 'card', encrypted: await encrypt(cardData()) };
    const idem = randomUUID();
    const send = () =>
      ctx.http.post('/tokens').set('BT-API-KEY', app.key).set('BT-IDEMPOTENCY-KEY', idem).send(once);
    const first = await send();
    expect(first.status).toBe(201);
    expect((await send()).body.id).toBe(first.body.id);
  });

  it('validates the decrypted data like clear data, without quoting it', async () => {
    await refused({ encrypted: await encrypt({ ...card, number: '4242424242424241' }) }, /./, 'data.number');
    await refused({ encrypted: await encrypt(card), data: card }, /instead of data/);
  });

  it('applies the access rules of the sender', async () => {
    const narrow = await tokenApp(ctx, tenant, [rule('/bank/', 'reveal', ['token:create'])]);
    const res = await narrow.api.create({ type: 'card', encrypted: await encrypt(card) });
    expect(res.status).toBe(403);
  });

  it('tokenizes encrypted definitions beside clear ones', async () => {
    const res = await api.tokenize({
      card: { type: 'card', encrypted: await encrypt(card) },
      note: { type: 'token', encrypted: await encrypt('a secret note') },
      plain: 'leaf',
    });
    expect(res.status).toBe(200);
    expect((await api.get(res.body.card.id)).body.data).toEqual(card);
    expect((await api.get(res.body.note.id)).body.data).toBe('a secret note');
    const bad = await api.tokenize({ card: { type: 'card', encrypted: 'garbage' } });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors)).toEqual(['card.encrypted']);
  });

  it("refuses a deleted, an expired, an unknown or another tenant's key", async () => {
    const doomed = await newKey(tenant);
    const jwe = await encrypt(card, {}, doomed);
    await ctx.http.delete(`/keys/${doomed.key_id}`).set('BT-API-KEY', tenant.key).expect(204);
    await refused({ encrypted: jwe }, /^names no client encryption key of this tenant$/);

    const expiring = await newKey(tenant, { expires_at: new Date(Date.now() + 3600_000).toISOString() });
    await ctx.dataSource.query(
      `UPDATE client_encryption_keys SET expires_at = now() - interval '1 second' WHERE id = $1`,
      [expiring.key_id],
    );
    await refused({ encrypted: await encrypt(card, {}, expiring) }, /has expired/);

    await refused(
      { encrypted: await encrypt(card, { kid: randomUUID() }) },
      /names no client encryption key/,
    );
    const foreign = await newKey(await ctx.newTenant('Foreign'));
    await refused({ encrypted: await encrypt(card, {}, foreign) }, /names no client encryption key/);
    // Another tenant's key named by one of ours: the agreement fails, nothing decrypts.
    await refused({ encrypted: await encrypt(card, { kid: key.key_id }, foreign) }, /could not be decrypted/);
  });

  it('refuses tampered, garbage and non-string JWEs', async () => {
    const jwe = await encrypt(card);
    const parts = jwe.split('.');
    const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
    await refused(
      { encrypted: [parts[0], '', parts[2], flip(parts[3]), parts[4]].join('.') },
      /could not be decrypted/,
    );
    await refused(
      { encrypted: [parts[0], '', parts[2], parts[3], flip(parts[4])].join('.') },
      /could not be decrypted/,
    );
    await refused(
      { encrypted: [parts[0], '', flip(parts[2]), parts[3], parts[4]].join('.') },
      /could not be decrypted/,
    );
    await refused({ encrypted: withHeader(jwe, { ...headerOf(jwe), cty: 'x' }) }, /could not be decrypted/);
    await refused({ encrypted: [parts[0], 'AAAA', ...parts.slice(2)].join('.') }, /empty encrypted key/);
    await refused({ encrypted: 'garbage' }, /not a JWE compact serialization/);
    await refused({ encrypted: 'a.b.c.d.e' }, /no readable protected header/);
    await refused({ encrypted: `${jwe}.more` }, /not a JWE compact serialization/);
    await refused({ encrypted: 42 }, /must be a JWE compact serialization string/);
    await refused({ encrypted: { jwe } }, /must be a JWE compact serialization string/);
  });

  it('refuses another alg or enc and dangerous header members', async () => {
    await refused(
      { encrypted: await encrypt(card, { alg: 'ECDH-ES+A256KW' }) },
      /must use alg ECDH-ES and enc A256GCM/,
    );
    await refused(
      { encrypted: await encrypt(card, { enc: 'A128GCM' }) },
      /must use alg ECDH-ES and enc A256GCM/,
    );
    await refused({ encrypted: await encrypt(card, { enc: 'A256CBC-HS512' }) }, /must use alg ECDH-ES/);
    const jwe = await encrypt(card);
    const header = headerOf(jwe);
    await refused({ encrypted: withHeader(jwe, { ...header, alg: 'dir' }) }, /must use alg ECDH-ES/);
    await refused({ encrypted: withHeader(jwe, { ...header, alg: 'none' }) }, /must use alg ECDH-ES/);
    for (const member of ['zip', 'jku', 'jwk', 'x5u', 'x5c', 'crit', 'p2c']) {
      const value = member === 'zip' ? 'DEF' : member === 'crit' ? ['exp'] : 'x';
      await refused(
        { encrypted: withHeader(jwe, { ...header, [member]: value }) },
        new RegExp(`carry: ${member}$`),
      );
    }
    await refused(
      { encrypted: withHeader(jwe, { ...header, kid: 'not-a-uuid' }) },
      /must name its client encryption key/,
    );
    const { kid: _kid, ...noKid } = header;
    await refused({ encrypted: withHeader(jwe, noKid) }, /must name its client encryption key/);
  });

  it('never logs the data it decrypted or refused', () => {
    expect(ctx.logs.join('\n')).not.toContain(card.number);
  });
});
