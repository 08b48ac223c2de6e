import { encryptTo } from '../support/client-encryption';
import { TestApplication, TestContext, TestTenant } from '../support/test-app';
import { cardData, rule } from '../support/token-factory';

interface Key {
  key_id: string;
  public_key_pem: string;
}

const CARD = cardData({ number: '4111111111111111', expiration_month: 7, expiration_year: 2032, cvc: '987' });

/** `encrypted` on POST /token-intents: a page's JWE opened as POST /tokens opens it, then sealed as an intent. */
describe('token intents sent encrypted to a client encryption key', () => {
  const world: { ctx?: TestContext; acme?: TestTenant; page?: TestApplication; backend?: TestApplication } =
    {};
  const ctx = (): TestContext => world.ctx as TestContext;
  let key: Key;

  beforeAll(async () => {
    world.ctx = await TestContext.create();
    world.acme = await ctx().newTenant('EncryptedIntents');
    world.page = await ctx().newApplication(world.acme, 'public', ['token-intent:create']);
    world.backend = await ctx().newApplication(
      world.acme,
      'private',
      ['token-intent:read'],
      [rule('/', 'reveal', ['token:create', 'token:read'])],
    );
    key = await newKey(world.acme);
  });
  afterAll(() => ctx().close());

  async function newKey(of: TestTenant): Promise<Key> {
    return (await ctx().http.post('/keys').set('BT-API-KEY', of.key).send({}).expect(201)).body as Key;
  }
  const createIntent = (body: object) =>
    ctx()
      .http.post('/token-intents')
      .set('BT-API-KEY', (world.page as TestApplication).key)
      .send(body);
  const backend = () => (world.backend as TestApplication).key;

  /** A refused create: 400 on `path`, the answer never quoting the card. */
  async function refused(body: object, message: RegExp, path = 'encrypted'): Promise<void> {
    const res = await createIntent({ type: 'card', ...body });
    expect([res.status, Object.keys(res.body.errors ?? {})]).toEqual([400, [path]]);
    expect(res.body.errors[path]).toEqual([expect.stringMatching(message)]);
    expect(JSON.stringify(res.body)).not.toContain(CARD.number);
  }

  it('makes the same intent as clear data, and converts into a token of the decrypted data', async () => {
    const sealed = await createIntent({
      type: 'card',
      encrypted: await encryptTo(key.public_key_pem, key.key_id, CARD),
    });
    expect(sealed.status).toBe(201);
    const clear = await createIntent({ type: 'card', data: CARD }).expect(201);
    const shown = ({ id: _id, created_at: _c, expires_at: _e, ...rest }: Record<string, unknown>) => rest;
    expect(shown(sealed.body)).toEqual(shown(clear.body));
    expect(sealed.body.card).toEqual({
      bin: '41111111',
      last4: '1111',
      brand: 'visa',
      expiration_month: 7,
      expiration_year: 2032,
    });
    expect(JSON.stringify(sealed.body)).not.toContain('encrypted');

    const token = await ctx()
      .http.post('/tokens')
      .set('BT-API-KEY', backend())
      .send({ token_intent_id: sealed.body.id })
      .expect(201);
    const read = await ctx().http.get(`/tokens/${token.body.id}`).set('BT-API-KEY', backend()).expect(200);
    expect(read.body.data).toEqual(CARD);
  });

  it('validates the decrypted data as clear data, without quoting it', async () => {
    const luhn = { ...CARD, number: '4111111111111112' };
    await refused(
      { encrypted: await encryptTo(key.public_key_pem, key.key_id, luhn) },
      /Luhn/,
      'data.number',
    );
    const jwe = await encryptTo(key.public_key_pem, key.key_id, CARD);
    await refused({ encrypted: jwe, data: CARD }, /instead of data/);
    await refused({ encrypted: 'garbage' }, /not a JWE compact serialization/);
    await refused({ encrypted: 42 }, /must be a JWE compact serialization string/);
  });

  it("refuses a deleted key and another tenant's key: neither decrypts", async () => {
    const doomed = await newKey(world.acme as TestTenant);
    const jwe = await encryptTo(doomed.public_key_pem, doomed.key_id, CARD);
    await ctx()
      .http.delete(`/keys/${doomed.key_id}`)
      .set('BT-API-KEY', (world.acme as TestTenant).key)
      .expect(204);
    await refused({ encrypted: jwe }, /^names no client encryption key of this tenant$/);

    const foreign = await newKey(await ctx().newTenant('ForeignKeys'));
    await refused(
      { encrypted: await encryptTo(foreign.public_key_pem, foreign.key_id, CARD) },
      /^names no client encryption key of this tenant$/,
    );
    // Another tenant's public key under our key's id: the agreement fails, nothing decrypts.
    await refused(
      { encrypted: await encryptTo(foreign.public_key_pem, key.key_id, CARD) },
      /could not be decrypted/,
    );
    const kept = await ctx().dataSource.query(
      'SELECT count(*)::int AS n FROM token_intents WHERE tenant_id = $1',
      [(world.acme as TestTenant).tenantId],
    );
    // Only the intents the first test made (one converted, so deleted): no refused create left a row.
    expect(kept[0].n).toBe(1);
  });

  it('never logs the data it decrypted or refused', () => {
    expect(ctx().logs.join('\n')).not.toContain(CARD.number);
  });
});
