import { TestContext } from '../support/test-app';

/** Issue 25 item 5: the accept page's limit counts clients, not the load balancer in front of them. */
describe('the acceptance rate limit per client address', () => {
  const attempt = (ctx: TestContext, forwardedFor: string) =>
    ctx.http
      .post('/invitations/accept')
      .set('X-Forwarded-For', forwardedFor)
      .send({ token: 'guess', first_name: 'A', last_name: 'B' });

  describe('with no trusted proxy (the default)', () => {
    let ctx: TestContext;
    beforeAll(async () => (ctx = await TestContext.create()));
    afterAll(() => ctx.close());

    it('is not evaded by varying X-Forwarded-For', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 25; i++) {
        statuses.push((await attempt(ctx, `198.51.100.${i}`)).status);
      }
      expect(statuses.slice(0, 20).every((s) => s === 404)).toBe(true);
      expect(statuses.slice(20)).toEqual([429, 429, 429, 429, 429]);
    });
  });

  describe('behind a trusted proxy on 127.0.0.1', () => {
    let ctx: TestContext;
    beforeAll(async () => (ctx = await TestContext.create({ env: { TRUST_PROXY: '127.0.0.1,::1' } })));
    afterAll(() => ctx.close());

    it('gives each forwarded client its own bucket, and a client-written entry changes nothing', async () => {
      for (let i = 0; i < 20; i++) {
        expect((await attempt(ctx, '203.0.113.1')).status).toBe(404);
      }
      const limited = await attempt(ctx, '203.0.113.1');
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // The client wrote the left entry itself; the proxy appended its real address.
      expect((await attempt(ctx, '192.0.2.99, 203.0.113.1')).status).toBe(429);
      // Another client behind the same proxy is not locked out.
      expect((await attempt(ctx, '203.0.113.2')).status).toBe(404);
    });
  });
});
