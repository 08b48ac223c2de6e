import { Clock } from '../../src/common/clock';
import { loadConfig } from '../../src/config/app-config';
import { MasterKeyring } from '../../src/crypto/master-keyring.service';
import { expectProblem } from '../support/problems';
import { TestContext } from '../support/test-app';
import { TestClock } from '../support/test-clock';

/** Issue 37 item 8: /health/ready is public, so it reuses its master-key check and is limited per address. */
describe('/health/ready', () => {
  const clock = new TestClock();
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create({
      env: { TRUST_PROXY: '127.0.0.1', RATE_LIMIT_HEALTH: '5/600' },
      overrides: [{ provide: Clock, useValue: clock }],
    });
  });
  afterAll(() => ctx.close());

  const readyFrom = (client: string) => ctx.http.get('/health/ready').set('X-Forwarded-For', client);

  it('checks the master keys at most once in 5 s (by the injectable clock)', async () => {
    const keys = ctx.get(MasterKeyring);
    const checks = jest.spyOn(keys, 'problem');
    const wraps = jest.spyOn(keys.keyring, 'wrap');
    try {
      clock.set(Date.now());
      for (let i = 0; i < 3; i += 1) {
        await readyFrom('198.51.100.1').expect(200);
      }
      expect([checks.mock.calls.length, wraps.mock.calls.length]).toEqual([1, 1]);
      clock.advance(4_900);
      await readyFrom('198.51.100.1').expect(200);
      expect(checks).toHaveBeenCalledTimes(1);
      clock.advance(200);
      await readyFrom('198.51.100.1').expect(200);
      expect([checks.mock.calls.length, wraps.mock.calls.length]).toEqual([2, 2]);
    } finally {
      checks.mockRestore();
      wraps.mockRestore();
      clock.reset();
    }
  });

  it('answers 429 past RATE_LIMIT_HEALTH from one address; others and liveness are served', async () => {
    for (let i = 0; i < 5; i += 1) {
      await readyFrom('198.51.100.2').expect(200);
    }
    const refused = await readyFrom('198.51.100.2');
    expectProblem(refused, 429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['ratelimit-policy']).toBe('"health";q=5;w=600');
    await readyFrom('198.51.100.3').expect(200);
    await ctx.http.get('/health/live').set('X-Forwarded-For', '198.51.100.2').expect(200);
  });
});

describe('/health/ready by default', () => {
  it('never refuses an orchestrator probing every second: 300 in 10 s per address and replica', async () => {
    expect(loadConfig({}).rateLimits.health).toEqual({ points: 300, seconds: 10 });
    const ctx = await TestContext.create();
    try {
      // 60 probes at once: a minute of one-a-second probes within one window, all served.
      for (let i = 0; i < 60; i += 1) {
        await ctx.http.get('/health/ready').expect(200);
      }
    } finally {
      await ctx.close();
    }
  });
});
