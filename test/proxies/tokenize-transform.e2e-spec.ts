import { recordsOf } from '../support/audit';
import { encryptTo } from '../support/client-encryption';
import { expectProblem } from '../support/problems';
import { TestHttpsServer } from '../support/https-test-server';
import {
  callConfiguredProxy,
  createProxy,
  expectProxyError,
  ProxyFixture,
  proxyFixture,
} from '../support/proxy-fixture';
import { TestApplication, TestTenant } from '../support/test-app';
import { cardData, countTokens, rule, tokenApp } from '../support/token-factory';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The `tokenize` listed transform, both sides, through a real local HTTPS destination. */
describe('/proxies: the tokenize transform', () => {
  let fx: ProxyFixture;
  let tenant: TestTenant;
  let caller: TestApplication;
  let writer: TestApplication;
  let reader: Awaited<ReturnType<typeof tokenApp>>;
  /** Records the bodies it receives and answers `{ received: true }`. */
  let recorder: TestHttpsServer;
  const received: string[] = [];
  /** Answers with a card account, as a card issuer would. */
  let issuer: TestHttpsServer;
  const issued = cardData();

  beforeAll(async () => {
    fx = await proxyFixture();
    recorder = await fx.server((_req, res, body) => {
      received.push(body.toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ received: true }));
    });
    issuer = await fx.server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'issued', account: issued }));
    });
    tenant = await fx.ctx.newTenant();
    caller = await fx.ctx.newApplication(tenant, 'private', ['token:use']);
    writer = await fx.ctx.newApplication(tenant, 'private', ['token:create']);
    reader = await tokenApp(fx.ctx, tenant, [rule('/', 'reveal', ['token:read'])]);
  });
  afterAll(() => fx.close());

  const call = (key: string, body: unknown) => callConfiguredProxy(fx.ctx, caller.key, key, body);
  const tokenizeCard = (side: 'req' | 'res', extra: Record<string, unknown> = {}) => ({
    type: 'tokenize',
    options: { identifier: 'card', token: { type: 'card', data: `{{ ${side}.card }}` }, ...extra },
  });

  it('request side: the destination gets the token id where the card was, never the card number', async () => {
    const { id, key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(recorder),
      application: { id: writer.id },
      request_transforms: [tokenizeCard('req', { location: '$.card' })],
    });
    const card = cardData();
    received.length = 0;
    const answer = await call(key, { card, amount: 500 });
    expect([answer.status, answer.body]).toEqual([200, { received: true }]);
    expect(received).toHaveLength(1);
    expect(received[0]).not.toContain(card.number);
    const sent = JSON.parse(received[0]) as { card: string; amount: number };
    expect(sent).toEqual({ card: expect.stringMatching(UUID), amount: 500 });

    const token = await reader.api.get(sent.card);
    expect(token.status).toBe(200);
    expect(token.body).toMatchObject({ type: 'card', data: card, created_by: writer.id });
    expect(await recordsOf(fx.ctx, tenant.tenantId, 'create', sent.card)).toHaveLength(1);
    expect(fx.ctx.logs.join('\n')).not.toContain(card.number);

    const got = await fx.ctx.http.get(`/proxies/${id}`).set('BT-API-KEY', tenant.key);
    expect(got.body.request_transforms).toEqual([tokenizeCard('req', { location: '$.card' })]);
  });

  it("request side: a JWE from the body goes in the token's encrypted field, decrypted as on POST /tokens", async () => {
    const clientKey = await fx.ctx.http.post('/keys').set('BT-API-KEY', tenant.key).send({}).expect(201);
    const card = cardData();
    const jwe = await encryptTo(
      clientKey.body.public_key_pem as string,
      clientKey.body.key_id as string,
      card,
    );
    const { key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(recorder),
      application: { id: writer.id },
      request_transforms: [
        {
          type: 'tokenize',
          options: { token: { type: 'card', encrypted: '{{ req.jwe }}' }, location: '$.jwe' },
        },
      ],
    });
    received.length = 0;
    expect((await call(key, { jwe })).status).toBe(200);
    const sent = JSON.parse(received[0]) as { jwe: string };
    expect(sent.jwe).toMatch(UUID);
    expect((await reader.api.get(sent.jwe)).body.data).toEqual(card);
  });

  it('response side: the caller gets the token id (in the body and through transform_identifier)', async () => {
    const { key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(issuer),
      application: { id: writer.id },
      response_transforms: [
        {
          type: 'tokenize',
          options: {
            identifier: 'account',
            token: {
              type: 'card',
              data: {
                number: '{{ res.account.number }}',
                expiration_month: '{{ res.account.expiration_month }}',
                expiration_year: '{{ res.account.expiration_year }}',
              },
              metadata: { source: 'issuer' },
            },
            location: '$.account',
          },
        },
        {
          type: 'append_header',
          options: {
            value: "{{ transform_identifier: 'account' | json: '$.id' }}",
            location: 'X-Account-Token',
          },
        },
      ],
    });
    const answer = await call(key, {});
    expect(answer.status).toBe(200);
    expect(answer.text).not.toContain(issued.number);
    expect(answer.body).toEqual({ status: 'issued', account: expect.stringMatching(UUID) });
    expect(answer.headers['x-account-token']).toBe(answer.body.account);
    const token = await reader.api.get(answer.body.account as string);
    expect(token.body).toMatchObject({
      type: 'card',
      data: { number: issued.number, expiration_month: 12, expiration_year: 2030 },
      metadata: { source: 'issuer' },
    });
    expect(fx.ctx.logs.join('\n')).not.toContain(issued.number);
  });

  it('a token the application may not create is refused as a proxy error, and nothing is created', async () => {
    // token:create on /pii/ only: a card goes to /pci/high/.
    const piiOnly = await fx.ctx.newApplication(
      tenant,
      'private',
      [],
      [rule('/pii/', 'mask', ['token:create'])],
    );
    const useOnly = await fx.ctx.newApplication(tenant, 'private', ['token:use']);
    for (const application of [piiOnly, useOnly]) {
      const { key } = await createProxy(fx.ctx, tenant, {
        destination_url: fx.url(recorder),
        application: { id: application.id },
        request_transforms: [tokenizeCard('req', { location: '$.card' })],
      });
      const before = await countTokens(fx.ctx, tenant.tenantId);
      received.length = 0;
      const card = cardData();
      const answer = await call(key, { card });
      expectProxyError(answer, 403);
      expect(answer.text).not.toContain(card.number);
      expect(received).toHaveLength(0);
      expect(await countTokens(fx.ctx, tenant.tenantId)).toBe(before);
    }
  });

  it('a token the token rules refuse (a card number that fails Luhn) is a 400 proxy error, nothing sent', async () => {
    const { key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(recorder),
      application: { id: writer.id },
      request_transforms: [tokenizeCard('req', { location: '$.card' })],
    });
    received.length = 0;
    const before = await countTokens(fx.ctx, tenant.tenantId);
    expectProxyError(await call(key, { card: { number: '4242424242424241' } }), 400);
    expect(received).toHaveLength(0);
    expect(await countTokens(fx.ctx, tenant.tenantId)).toBe(before);
  });

  it('the tokens of a list are created all or none: a refusal at a later step takes back the earlier ones', async () => {
    const secondCard = {
      type: 'tokenize',
      options: { identifier: 'second', token: { type: 'card', data: '{{ req.second }}' } },
    };
    const { key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(recorder),
      application: { id: writer.id },
      request_transforms: [tokenizeCard('req', { location: '$.card' }), secondCard],
    });
    received.length = 0;
    const before = await countTokens(fx.ctx, tenant.tenantId);
    // The first card is valid and its token is made; the second fails Luhn.
    expectProxyError(await call(key, { card: cardData(), second: { number: '4242424242424241' } }), 400);
    expect(received).toHaveLength(0);
    expect(await countTokens(fx.ctx, tenant.tenantId)).toBe(before);

    const answer = await call(key, { card: cardData(), second: cardData() });
    expect(answer.status).toBe(200);
    expect(await countTokens(fx.ctx, tenant.tenantId)).toBe(before + 2);
  });

  const create = (body: Record<string, unknown>) =>
    fx.ctx.http
      .post('/proxies')
      .set('BT-API-KEY', tenant.key)
      .send({
        name: 'Tokenizing',
        destination_url: fx.url(recorder),
        application: { id: writer.id },
        ...body,
      });
  const tokenize = (options: Record<string, unknown>) => ({
    response_transforms: [{ type: 'tokenize', options }],
  });

  it.each([
    ['no token', tokenize({ identifier: 'a' }), 'response_transforms[0].options.token'],
    [
      'a token without a type',
      tokenize({ token: { data: '{{ res.a }}' } }),
      'response_transforms[0].options.token.type',
    ],
    [
      'a token without data',
      tokenize({ token: { type: 'token' } }),
      'response_transforms[0].options.token.data',
    ],
    [
      'an expression that does not parse',
      tokenize({ token: { type: 'token', data: '{{ res.a | no_such_filter }}' } }),
      'response_transforms[0].options.token',
    ],
    [
      'a location that is not a path of names',
      tokenize({ token: { type: 'token', data: '{{ res.a }}' }, location: '$[0]' }),
      'response_transforms[0].options.location',
    ],
    [
      'an identifier that is not a name',
      tokenize({ token: { type: 'token', data: '{{ res.a }}' }, identifier: 'a b' }),
      'response_transforms[0].options.identifier',
    ],
    [
      'an identifier used twice in one list',
      {
        request_transforms: [tokenizeCard('req'), tokenizeCard('req')],
      },
      'request_transforms[1].options.identifier',
    ],
    [
      'a tokenize without an application',
      { application: null, request_transforms: [tokenizeCard('req')] },
      'application',
    ],
  ])('refuses %s with 400', async (_name, body, field) => {
    expectProblem(await create(body), 400, [field]);
  });

  it('PATCH that removes the application of a tokenizing proxy is refused with 400', async () => {
    const res = await create({ request_transforms: [tokenizeCard('req')] });
    expect(res.status).toBe(201);
    const patched = await fx.ctx.http
      .patch(`/proxies/${res.body.id as string}`)
      .set('BT-API-KEY', tenant.key)
      .set('Content-Type', 'application/merge-patch+json')
      .send(JSON.stringify({ application: null }));
    expectProblem(patched, 400, ['application']);
  });
});
