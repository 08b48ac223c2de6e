import type { Response } from 'supertest';
import { TestContext, TestTenant } from '../support/test-app';

const PAGE = 'https://shop.example.com';

function preflight(ctx: TestContext, path: string, origin = PAGE) {
  return ctx.http
    .options(path)
    .set('Origin', origin)
    .set('Access-Control-Request-Method', 'POST')
    .set('Access-Control-Request-Headers', 'bt-api-key, content-type, bt-idempotency-key');
}

function corsOf(res: Response): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(res.headers as Record<string, string>).filter(([name]) =>
      name.startsWith('access-control-'),
    ),
  );
}

describe('CORS on the API', () => {
  const vault: { ctx?: TestContext; tenant?: TestTenant } = {};
  const ctxOf = (): TestContext => vault.ctx as TestContext;
  const keyOf = (): string => (vault.tenant as TestTenant).key;

  beforeAll(async () => {
    vault.ctx = await TestContext.create();
    vault.tenant = await vault.ctx.newTenant();
  });
  afterAll(() => vault.ctx?.close());

  describe('CORS_ORIGINS unset (any origin)', () => {
    it('answers a preflight of an API route with what the SDKs send, never with credentials', async () => {
      const res = await preflight(ctxOf(), '/tokens');
      expect(res.status).toBe(204);
      expect(corsOf(res)).toEqual({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE',
        'access-control-allow-headers': expect.stringContaining('BT-API-KEY') as string,
        'access-control-max-age': '600',
      });
      const allowed = res.headers['access-control-allow-headers'].split(', ');
      expect(allowed).toEqual(
        expect.arrayContaining(['BT-API-KEY', 'Content-Type', 'BT-IDEMPOTENCY-KEY', 'BT-CLIENT-USER-AGENT']),
      );
      expect(allowed).not.toContain('Authorization');
      expect(allowed).not.toContain('Cookie');
    });

    it('lets the page read answers and errors of the API, with the trace id, and nothing more', async () => {
      const ok = await ctxOf().http.get('/applications').set('Origin', PAGE).set('BT-API-KEY', keyOf());
      expect(ok.status).toBe(200);
      expect(corsOf(ok)).toEqual({
        'access-control-allow-origin': '*',
        'access-control-expose-headers':
          'BT-TRACE-ID, Idempotent-Replayed, RateLimit, RateLimit-Policy, Retry-After',
      });
      const refused = await ctxOf().http.get('/tokens').set('Origin', PAGE);
      expect([refused.status, refused.headers['access-control-allow-origin']]).toEqual([401, '*']);
      const unknown = await ctxOf().http.get('/no-such-route').set('Origin', PAGE);
      expect([unknown.status, unknown.headers['access-control-allow-origin']]).toEqual([404, '*']);
    });

    it('adds nothing to a request without Origin (server to server)', async () => {
      const res = await ctxOf().http.get('/applications').set('BT-API-KEY', keyOf());
      expect([res.status, corsOf(res)]).toEqual([200, {}]);
    });

    it.each([
      '/invitations/accept/abc',
      '/proxy',
      '/proxy/v1/charges',
      '/PROXY',
      '/docs',
      '/docs-json',
      '/metrics',
      '/health',
      '/health/ready',
      '/unseal',
    ])('is not served on %s', async (path) => {
      const res = await preflight(ctxOf(), path);
      expect(res.status).not.toBe(204);
      expect(corsOf(res)).toEqual({});
      const get = await ctxOf().http.get(path).set('Origin', PAGE);
      expect(corsOf(get)).toEqual({});
    });

    it('is served on routes that merely start like an excluded one', async () => {
      const res = await preflight(ctxOf(), '/proxies');
      expect([res.status, res.headers['access-control-allow-origin']]).toEqual([204, '*']);
    });
  });

  describe('CORS_ORIGINS listing origins', () => {
    beforeAll(() => ctxOf().restart({ CORS_ORIGINS: `${PAGE}, http://127.0.0.1:8080` }));

    it('names the calling origin when it is listed, and varies on it', async () => {
      const res = await preflight(ctxOf(), '/tokens', 'http://127.0.0.1:8080');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('http://127.0.0.1:8080');
      expect(res.headers.vary).toMatch(/Origin/);
      const get = await ctxOf().http.get('/applications').set('Origin', PAGE).set('BT-API-KEY', keyOf());
      expect([get.headers['access-control-allow-origin'], get.headers.vary]).toEqual([PAGE, 'Origin']);
    });

    it('gives any other origin no CORS header, on preflights and answers', async () => {
      for (const origin of ['https://evil.example.com', 'https://shop.example.com.evil.com', 'null']) {
        const res = await preflight(ctxOf(), '/tokens', origin);
        expect([res.status, corsOf(res)]).toEqual([204, {}]);
        const get = await ctxOf().http.get('/applications').set('Origin', origin).set('BT-API-KEY', keyOf());
        expect([get.status, corsOf(get)]).toEqual([200, {}]);
      }
    });
  });
});
