import { loadConfig } from '../../src/config/app-config';
import { splitMasterKeys } from '../../src/crypto/shamir';
import { TEST_MASTER_KEYS, TestContext } from '../support/test-app';
import { ALL_TOKEN_PERMISSIONS, cardData, rule, tokenApp } from '../support/token-factory';

jest.setTimeout(120_000);

describe('dual control: a sealed start and unseal with Shamir shares', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('answers 503 while sealed, and reads again once 3 of 5 shares are given', async () => {
    const tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
    const card = cardData();
    const id = (await app.api.create({ type: 'card', data: card }).expect(201)).body.id;
    const shares = await splitMasterKeys(TEST_MASTER_KEYS, 5, 3);

    await ctx.restart({ VAULT_SEALED: 'true', VAULT_MASTER_KEYS: '' });
    const ready = await ctx.http.get('/health/ready').expect(503);
    expect(JSON.stringify(ready.body)).toMatch(/sealed/);
    const read = await app.api.get(id).expect(503);
    expect(read.body.detail).toMatch(/The vault is sealed/);
    await app.api.create({ type: 'card', data: cardData() }).expect(503);

    await ctx.http.post('/unseal').send({ share: 'not-a-share' }).expect(400);
    expect((await ctx.http.post('/unseal').send({ share: shares[3] }).expect(200)).body).toEqual({
      sealed: true,
      shares_received: 1,
    });
    expect((await ctx.http.post('/unseal').send({ share: shares[0] }).expect(200)).body.sealed).toBe(true);
    await app.api.get(id).expect(503);
    expect((await ctx.http.post('/unseal').send({ share: shares[4] }).expect(200)).body).toEqual({
      sealed: false,
      shares_received: 0,
    });
    expect((await app.api.get(id).expect(200)).body.data.number).toBe(card.number);
    await ctx.http.get('/health/ready').expect(200);
    expect(ctx.logs.join('\n')).not.toContain(shares[3]);
  });

  it('drops every share when they give keys that do not open the tenant keys', async () => {
    const other = await splitMasterKeys(`other-1:${Buffer.alloc(32, 3).toString('base64')}`, 3, 2);
    await ctx.restart({ VAULT_SEALED: 'true', VAULT_MASTER_KEYS: '' });
    await ctx.http.post('/unseal').send({ share: other[0] }).expect(200);
    const refused = await ctx.http.post('/unseal').send({ share: other[1] }).expect(409);
    expect(refused.body.detail).toMatch(/do not open the tenant keys/);
    expect(JSON.stringify(refused.body)).not.toContain(Buffer.alloc(32, 3).toString('base64'));
    await ctx.http.get('/health/ready').expect(503);
  });

  it('refuses VAULT_SEALED with VAULT_MASTER_KEYS set, or with the pkcs11 provider', () => {
    expect(() => loadConfig({ VAULT_SEALED: 'true', VAULT_MASTER_KEYS: TEST_MASTER_KEYS })).toThrow(
      /VAULT_SEALED=true needs VAULT_KEY_PROVIDER=env and no VAULT_MASTER_KEYS/,
    );
    expect(() => loadConfig({ VAULT_SEALED: 'true', VAULT_KEY_PROVIDER: 'pkcs11' })).toThrow(/VAULT_SEALED/);
  });
});
