import { logger as jsSdkTelemetry } from '@basis-theory/basis-theory-js/common/logging';
import { SdkClients } from '../support/sdk-clients';
import { TestApplication, TestContext, TestTenant } from '../support/test-app';
import { rule } from '../support/token-factory';

/** Both official SDKs' sessions methods, unchanged, then reads with the session key through the SDKs. */
describe('official SDKs: sessions', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let sdks: SdkClients;
  let page: TestApplication;
  let backend: TestApplication;
  let token: string;
  let other: string;

  beforeAll(async () => {
    // basis-theory-js reports errors to the hosted service's telemetry: not from tests.
    jsSdkTelemetry.setTelemetryEnabled(false);
    ctx = await TestContext.create();
    sdks = await SdkClients.listen(ctx);
    tenant = await ctx.newTenant('SdkSessions');
    page = await ctx.newApplication(tenant, 'public', ['token:create']);
    backend = await ctx.newApplication(
      tenant,
      'private',
      [],
      [rule('/', 'reveal', ['token:create', 'token:read'])],
    );
    const bt = node(backend.key);
    token = (await bt.tokens.create({ type: 'token', data: { secret: 'revealed' } })).id as string;
    other = (await bt.tokens.create({ type: 'token', data: { secret: 'hidden' } })).id as string;
  });
  afterAll(() => ctx.close());

  const node = (apiKey: string) => sdks.node(apiKey);
  const js = (apiKey: string) => sdks.js(apiKey);
  const onlyToken = (id: string) => [
    {
      description: 'The one token the page shows',
      priority: 1,
      transform: 'reveal' as const,
      permissions: ['token:read'],
      conditions: [{ attribute: 'id', operator: 'equals', value: id }],
    },
  ];

  it('@basis-theory/node-sdk 5.7.0: sessions.create, sessions.authorize, then tokens.get with the session key', async () => {
    const session = await node(page.key).sessions.create();
    expect(session.sessionKey).toMatch(/^key_sess_/);
    expect(session.nonce).toEqual(expect.any(String));
    expect(session.expiresAt).toBeInstanceOf(Date);
    await expect(node(session.sessionKey as string).tokens.get(token)).rejects.toMatchObject({
      statusCode: 403,
    });
    await node(backend.key).sessions.authorize({ nonce: session.nonce as string, rules: onlyToken(token) });
    const revealed = await node(session.sessionKey as string).tokens.get(token);
    expect(revealed.data).toEqual({ secret: 'revealed' });
    await expect(node(session.sessionKey as string).tokens.get(other)).rejects.toMatchObject({
      statusCode: 403,
    });
    await expect(
      node(backend.key).sessions.authorize({ nonce: session.nonce as string, permissions: ['token:read'] }),
    ).rejects.toMatchObject({ statusCode: 409 });
  });

  it('@basis-theory/basis-theory-js 4.30.2: sessions.create, sessions.authorize, then tokens.retrieve', async () => {
    const session = await (await js(page.key)).sessions.create();
    expect(session.sessionKey).toMatch(/^key_sess_/);
    expect(new Date(session.expiresAt).getTime()).toBeGreaterThan(Date.now());
    await (
      await js(backend.key)
    ).sessions.authorize({
      nonce: session.nonce,
      expiresAt: new Date(Date.now() + 10 * 60_000).toISOString(),
      rules: onlyToken(token),
    });
    const reader = await js(session.sessionKey);
    expect((await reader.tokens.retrieve(token)).data).toEqual({ secret: 'revealed' });
    await expect(reader.tokens.retrieve(other)).rejects.toMatchObject({ status: 403 });
  });
});
