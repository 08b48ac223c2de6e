import type { Response } from 'supertest';
import { TestHttpsServer } from '../support/https-test-server';
import { expectProblem } from '../support/problems';
import { createProxy, expectProxyError, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import { TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

const SDK = "require('@basis-theory/basis-theory-reactor-formulas-sdk-js')";
const SANDBOX_CSP =
  "sandbox; default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** Headers tenant code sets that would act on the vault's origin, next to one that must pass. */
const HOSTILE_HEADERS = {
  'Content-Type': 'text/html',
  'Set-Cookie': 'session=attacker; Path=/',
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Credentials': 'true',
  'Content-Security-Policy': "script-src 'unsafe-inline'",
  'Content-Security-Policy-Report-Only': "default-src 'none'",
  'X-Content-Type-Options': 'none',
  'X-Frame-Options': 'ALLOWALL',
  'Clear-Site-Data': '"*"',
  'Service-Worker-Allowed': '/',
  Refresh: '0; url=https://attacker.example/',
  'Cross-Origin-Opener-Policy': 'unsafe-none',
  'Permissions-Policy': 'camera=*',
  'X-Why': 'kept',
};

/** An answer chosen by tenant code or a destination: sandboxed, and none of the origin-wide headers. */
function expectUntrusted(res: Response): void {
  expect(res.headers['content-security-policy']).toBe(SANDBOX_CSP);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['x-frame-options']).toBe('DENY');
  for (const name of [
    'set-cookie',
    'access-control-allow-origin',
    'access-control-allow-credentials',
    'content-security-policy-report-only',
    'clear-site-data',
    'service-worker-allowed',
    'refresh',
    'cross-origin-opener-policy',
    'permissions-policy',
  ]) {
    expect(res.headers).not.toHaveProperty(name);
  }
  expect(res.headers['x-why']).toBe('kept');
}

const customResponse = (status: string, headers: object = HOSTILE_HEADERS): string =>
  `throw new (${SDK}.CustomHttpResponseError)({ status: ${status}, headers: ${JSON.stringify(headers)}, body: '<b>hi</b>' });`;

/**
 * What tenant code and destinations may put on the vault's origin (issue 19 items 1 and 7): headers and
 * statuses of CustomHttpResponseError (reactors and transforms), response transforms and relayed answers.
 */
describe('answers chosen by tenant code or a destination', () => {
  let fx: ProxyFixture;
  let tenant: TestTenant;
  let echo: TestHttpsServer;
  /** May react (token:use). */
  let callerKey: string;

  beforeAll(async () => {
    fx = await proxyFixture();
    tenant = await fx.ctx.newTenant();
    echo = await fx.server();
    callerKey = (await tokenApp(fx.ctx, tenant, [], ['token:use'])).key;
  });
  afterAll(() => fx.close());

  async function react(code: string): Promise<Response> {
    const { reactorId } = await newReactor(fx.ctx, tenant, {
      code: `module.exports = async () => { ${code} };`,
    });
    return reactorsApi(fx.ctx, tenant).react(reactorId, {}, callerKey);
  }

  async function proxied(transforms: Record<string, unknown>, destination = fx.url(echo)): Promise<Response> {
    const { key } = await createProxy(fx.ctx, tenant, {
      destination_url: destination,
      require_auth: false,
      ...transforms,
    });
    return fx.ctx.http.get(`/proxy?bt-proxy-key=${key}`);
  }
  const transform = (body: string) => ({ code: `module.exports = async function (req) { ${body} };` });

  it("gives the vault's own answers nosniff, no framing, no referrer and a CSP; /docs its own", async () => {
    const answers = [
      await fx.ctx.http.get('/health'),
      await fx.ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key),
      await fx.ctx.http.get('/applications/key'),
      await fx.ctx.http.get('/no-such-path'),
    ];
    for (const res of answers) {
      expect(res.headers).toMatchObject({
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'content-security-policy':
          "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      });
    }
    for (const path of ['/docs', '/docs/swagger-ui-bundle.js', '/docs-json']) {
      const res = await fx.ctx.http.get(path);
      expect([path, res.status, res.headers['x-content-type-options']]).toEqual([path, 200, 'nosniff']);
      expect(res.headers['content-security-policy']).toMatch(/^default-src 'none'; script-src 'self';/);
    }
    expect((await fx.ctx.http.get('/docs')).text).not.toContain('persistAuthorization":true');
  });

  it("sandboxes a reactor's CustomHttpResponseError and drops its origin-wide headers", async () => {
    const res = await react(customResponse('200'));
    expect([res.status, res.headers['content-type'], res.text]).toEqual([
      200,
      expect.stringMatching(/^text\/html/),
      '"<b>hi</b>"',
    ]);
    expectUntrusted(res);
  });

  it("sandboxes a transform's CustomHttpResponseError, a response transform's headers and a relayed answer", async () => {
    expectUntrusted(await proxied({ request_transform: transform(customResponse('201')) }));
    const shaped = await proxied({
      response_transform: transform(`return { headers: ${JSON.stringify(HOSTILE_HEADERS)}, body: 'x' };`),
    });
    expect([shaped.status, shaped.text]).toEqual([200, 'x']);
    expectUntrusted(shaped);
    const destination = await fx.server((_req, res) => {
      res.writeHead(200, Object.entries(HOSTILE_HEADERS).flat());
      res.end('<b>hi</b>');
    });
    expectUntrusted(await proxied({}, fx.url(destination)));
  });

  // 1xx breaks HTTP framing; the others are not statuses. The last one changes the status after construction.
  const BAD_STATUSES: [string, string][] = [
    ['101', customResponse('101', {})],
    ['199', customResponse('199', {})],
    ['99', customResponse('99', {})],
    ['600', customResponse('600', {})],
    ['200.5', customResponse('200.5', {})],
    ['"200"', customResponse('"200"', {})],
    [
      '101 set later',
      `const e = new (${SDK}.CustomHttpResponseError)({ status: 200 }); e.status = 101; throw e;`,
    ],
    [
      '"204" set later',
      `const e = new (${SDK}.CustomHttpResponseError)({ status: 200 }); e.status = '204'; throw e;`,
    ],
  ];

  it.each(BAD_STATUSES)(
    'refuses a reactor status of %s with a 500 problem saying why',
    async (_label, code) => {
      const res = await react(code);
      expectProblem(res, 500);
      expect(JSON.stringify(res.body.errors)).toContain('must be an integer from 200 to 599');
    },
  );

  it.each(BAD_STATUSES)(
    'refuses a transform status of %s with a 500 proxy_error saying why',
    async (_label, code) => {
      const before = echo.requests;
      const problem = expectProxyError(await proxied({ request_transform: transform(code) }), 500);
      expect(JSON.stringify(problem.errors)).toContain('must be an integer from 200 to 599');
      expect(echo.requests).toBe(before);
    },
  );

  it('keeps the edges 200 and 599', async () => {
    expect((await react(customResponse('599', {}))).status).toBe(599);
    expect((await proxied({ request_transform: transform(customResponse('200', {})) })).status).toBe(200);
  });

  it('answers 502 proxy_error when a destination answers a status outside 200-599', async () => {
    const odd = await fx.server((_req, res) => {
      res.writeHead(999, { 'Content-Type': 'text/html' });
      res.end('<b>odd</b>');
    });
    const problem = expectProxyError(await proxied({}, fx.url(odd)), 502);
    expect(problem.detail).toContain('outside 200-599');
  });
});
