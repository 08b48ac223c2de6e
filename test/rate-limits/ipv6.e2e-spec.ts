import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { TestContext } from '../support/test-app';

/**
 * Issue 37 item 8: per-address limits count an IPv6 client by its /64 and an IPv4-mapped IPv6 address as
 * IPv4. The vault listens on ::1, a trusted proxy there, which presents the clients in X-Forwarded-For.
 */
describe('per-address limits over IPv6', () => {
  let ctx: TestContext;
  let base: string;

  beforeAll(async () => {
    ctx = await TestContext.create({ env: { TRUST_PROXY: '::1', RATE_LIMIT_UNAUTHENTICATED: '3/600' } });
    const server = ctx.vault.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '::1', resolve));
    base = `http://[::1]:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => ctx.close());

  const badKeyFrom = async (client: string): Promise<number> =>
    (await request(base).get('/tokens').set('BT-API-KEY', 'key_wrong').set('X-Forwarded-For', client)).status;

  it('counts every address of one /64 together, and another /64 apart', async () => {
    expect(await badKeyFrom('2001:db8:1:2::1')).toBe(401);
    expect(await badKeyFrom('2001:db8:1:2::2')).toBe(401);
    expect(await badKeyFrom('2001:DB8:1:2:abcd:0:0:3')).toBe(401);
    expect(await badKeyFrom('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(429);
    expect(await badKeyFrom('2001:db8:1:3::1')).toBe(401);
  });

  it('counts an IPv4-mapped IPv6 address, in either notation, as the IPv4 address', async () => {
    expect(await badKeyFrom('::ffff:198.51.100.7')).toBe(401);
    expect(await badKeyFrom('::ffff:c633:6407')).toBe(401);
    expect(await badKeyFrom('0:0:0:0:0:ffff:c633:6407')).toBe(401);
    expect(await badKeyFrom('198.51.100.7')).toBe(429);
    expect(await badKeyFrom('198.51.100.8')).toBe(401);
  });
});
