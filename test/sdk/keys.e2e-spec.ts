import { encryptTo } from '../support/client-encryption';
import { SdkClients } from '../support/sdk-clients';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, rule } from '../support/token-factory';

/**
 * node-sdk 5.7.0's `keys.*` unchanged against the vault, and a token and a token intent sent `encrypted` the
 * way a page using the hosted encryption helper makes it (basis-theory-js 4.30.2 has no keys family).
 */
describe('official SDK: client encryption keys', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let sdks: SdkClients;

  beforeAll(async () => {
    ctx = await TestContext.create();
    sdks = await SdkClients.listen(ctx);
    tenant = await ctx.newTenant('SdkKeys');
  });
  afterAll(() => ctx.close());

  const node = (apiKey: string) => sdks.node(apiKey);

  it('keys: create (with and without expiresAt), get, list, delete', async () => {
    const bt = node(tenant.key);
    const created = await bt.keys.create();
    expect(created.keyId).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n.+\n-----END PUBLIC KEY-----$/);
    expect(created.expiresAt).toBeInstanceOf(Date);

    const expiresAt = new Date(Date.now() + 7 * 24 * 3600_000);
    expiresAt.setUTCMilliseconds(0);
    const dated = await bt.keys.create({ expiresAt });
    expect(dated.expiresAt?.toISOString()).toBe(expiresAt.toISOString());

    const got = await bt.keys.get(dated.keyId as string);
    expect(got.keyId).toBe(dated.keyId);
    expect(got.expiresAt?.toISOString()).toBe(expiresAt.toISOString());
    expect(got).not.toHaveProperty('publicKeyPem');
    const listed = await bt.keys.list();
    expect(listed.map((k) => k.keyId)).toEqual(expect.arrayContaining([created.keyId, dated.keyId]));

    await bt.keys.delete(dated.keyId as string);
    await expect(bt.keys.get(dated.keyId as string)).rejects.toMatchObject({ statusCode: 404 });
    await expect(node('key_wrong').keys.list()).rejects.toMatchObject({ statusCode: 401 });
  });

  it('tokens.create with `encrypted` from the returned public key, read back in clear', async () => {
    const key = await node(tenant.key).keys.create();
    // A backend whose access rule reveals cards, so the read shows what the page encrypted.
    const backend = await ctx.newApplication(
      tenant,
      'private',
      [],
      [rule('/', 'reveal', ['token:create', 'token:read'])],
    );
    const bt = node(backend.key);
    const card = cardData();
    const encrypted = await encryptTo(key.publicKeyPem as string, key.keyId as string, card);
    const token = await bt.tokens.create({ type: 'card', encrypted });
    expect(token.type).toBe('card');
    expect(JSON.stringify(token)).not.toContain(card.number);
    expect((await bt.tokens.get(token.id as string)).data).toEqual(card);

    await node(tenant.key).keys.delete(key.keyId as string);
    await expect(bt.tokens.create({ type: 'card', encrypted })).rejects.toMatchObject({ statusCode: 400 });
  });

  it('tokenIntents.create with `encrypted` from a public application, converted by the backend', async () => {
    const key = await node(tenant.key).keys.create();
    const page = await ctx.newApplication(tenant, 'public', ['token-intent:create']);
    const backend = await ctx.newApplication(
      tenant,
      'private',
      [],
      [rule('/', 'reveal', ['token:create', 'token:read'])],
    );
    const card = cardData();
    const encrypted = await encryptTo(key.publicKeyPem as string, key.keyId as string, card);
    const intent = await node(page.key).tokenIntents.create({ type: 'card', encrypted });
    expect(intent.card).toMatchObject({ bin: card.number.slice(0, 8), last4: card.number.slice(-4) });
    expect(JSON.stringify(intent)).not.toContain(card.number);
    const token = await node(backend.key).tokens.create({ tokenIntentId: intent.id });
    expect((await node(backend.key).tokens.get(token.id as string)).data).toEqual(card);

    await node(tenant.key).keys.delete(key.keyId as string);
    await expect(node(page.key).tokenIntents.create({ type: 'card', encrypted })).rejects.toMatchObject({
      statusCode: 400,
    });
  });
});
