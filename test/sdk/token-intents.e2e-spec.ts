import type { AddressInfo } from 'node:net';
import { BasisTheoryClient } from '@basis-theory/node-sdk';
import { BasisTheory } from '@basis-theory/basis-theory-js';
import { TestApplication, TestContext } from '../support/test-app';
import { cardData, rule } from '../support/token-factory';

const CARD = cardData({ number: '5555555555554444', expiration_month: 3, expiration_year: 2031, cvc: '321' });

/** Both official SDKs' token intent methods, unchanged, and node-sdk's tokens.create({ tokenIntentId }). */
describe('official SDKs: token intents', () => {
  const apps: { ctx?: TestContext; page?: TestApplication; backend?: TestApplication; url?: string } = {};
  const ctx = (): TestContext => apps.ctx as TestContext;

  beforeAll(async () => {
    apps.ctx = await TestContext.create();
    // On every interface: basis-theory-js keeps plain HTTP only for the host name `localhost`.
    await ctx().vault.app.listen(0);
    apps.url = `http://localhost:${(ctx().vault.app.getHttpServer().address() as AddressInfo).port}`;
    const tenant = await ctx().newTenant('Intents');
    apps.page = await ctx().newApplication(tenant, 'public', ['token-intent:create']);
    apps.backend = await ctx().newApplication(
      tenant,
      'private',
      ['token-intent:read', 'token-intent:delete'],
      [rule('/', 'reveal', ['token:create', 'token:read'])],
    );
  });
  afterAll(() => ctx().close());

  const node = (app?: TestApplication) =>
    new BasisTheoryClient({ apiKey: app?.key, baseUrl: apps.url, maxRetries: 0 });

  it('node-sdk: tokenIntents.create, get and delete; tokens.create({ tokenIntentId })', async () => {
    const created = await node(apps.page).tokenIntents.create({ type: 'card', data: CARD });
    expect(created).toMatchObject({
      type: 'card',
      card: { bin: '55555555', last4: '4444', brand: 'mastercard', expirationMonth: 3, expirationYear: 2031 },
      createdBy: apps.page?.id,
    });
    expect(created.expiresAt?.getTime()).toBe((created.createdAt as Date).getTime() + 24 * 3600 * 1000);
    const backend = node(apps.backend);
    expect(await backend.tokenIntents.get(created.id as string)).toEqual(created);
    const token = await backend.tokens.create({ tokenIntentId: created.id });
    expect(token.fingerprint).toBe(created.fingerprint);
    expect((await backend.tokens.get(token.id as string)).data).toEqual(CARD);
    await expect(backend.tokens.create({ tokenIntentId: created.id })).rejects.toMatchObject({
      statusCode: 400,
    });
    await expect(backend.tokenIntents.get(created.id as string)).rejects.toMatchObject({ statusCode: 404 });
    const other = await node(apps.page).tokenIntents.create({ type: 'card', data: CARD });
    await backend.tokenIntents.delete(other.id as string);
    await expect(backend.tokenIntents.get(other.id as string)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('basis-theory-js: tokenIntents.create and delete', async () => {
    const page = await new BasisTheory().init(apps.page?.key, {
      apiBaseUrl: apps.url,
      disableTelemetry: true,
    });
    const created = await page.tokenIntents.create({ type: 'card', data: { ...CARD } });
    expect(created).toMatchObject({
      id: expect.any(String),
      tenantId: expect.any(String),
      type: 'card',
      card: { bin: '55555555', last4: '4444', brand: 'mastercard', expirationMonth: 3, expirationYear: 2031 },
    });
    const backend = await new BasisTheory().init(apps.backend?.key, {
      apiBaseUrl: apps.url,
      disableTelemetry: true,
    });
    await backend.tokenIntents.delete(created.id);
    await expect(node(apps.backend).tokenIntents.get(created.id)).rejects.toMatchObject({ statusCode: 404 });
  });
});
