import { RateLimiterMemory } from 'rate-limiter-flexible';
import { Limit } from './limit';

/** One store shared by "replicas" (Limit instances), counting its round trips. */
function sharedStore(points: number, seconds = 60): { store: RateLimiterMemory; calls: () => number } {
  const store = new RateLimiterMemory({ points, duration: seconds });
  let calls = 0;
  const consume = store.consume.bind(store);
  store.consume = (key, taken) => {
    calls += 1;
    return consume(key, taken);
  };
  return { store, calls: () => calls };
}

const replica = (store: RateLimiterMemory, points: number): Limit =>
  new Limit('application', { points, seconds: 60 }, store, () => undefined);

async function admitted(limit: Limit, key: string, requests: number): Promise<number> {
  let passed = 0;
  for (let i = 0; i < requests; i += 1) {
    if (!(await limit.take(key)).exceeded) {
      passed += 1;
    }
  }
  return passed;
}

describe('Limit', () => {
  it('never admits more than the limit across replicas, and a busy key costs far fewer store round trips', async () => {
    const { store, calls } = sharedStore(1000);
    const [a, b] = [replica(store, 1000), replica(store, 1000)];
    const passed = (await Promise.all([admitted(a, 'app', 700), admitted(b, 'app', 700)])).reduce(
      (x, y) => x + y,
    );
    expect(passed).toBeLessThanOrEqual(1000);
    // What the replicas hold unused is at most 2 % of the limit each.
    expect(passed).toBeGreaterThanOrEqual(1000 - 2 * 20);
    expect(calls()).toBeLessThan(200);
  });

  it('admits exactly the limit from one replica, concurrent requests included', async () => {
    const { store } = sharedStore(500);
    const limit = replica(store, 500);
    const answers = await Promise.all(Array.from({ length: 600 }, () => limit.take('app')));
    expect(answers.filter((u) => !u.exceeded)).toHaveLength(500);
    expect((await limit.take('app')).exceeded).toBe(true);
  });

  it('counts a small limit point by point, so two replicas together admit exactly it', async () => {
    const { store, calls } = sharedStore(5);
    const [a, b] = [replica(store, 5), replica(store, 5)];
    expect((await admitted(a, 'app', 3)) + (await admitted(b, 'app', 3))).toBe(5);
    expect(calls()).toBe(6);
  });

  it('keeps other keys apart and reports the remaining allowance', async () => {
    const { store } = sharedStore(100);
    const limit = replica(store, 100);
    const first = await limit.take('one');
    expect(first).toMatchObject({ exceeded: false, remaining: 99 });
    await admitted(limit, 'one', 99);
    expect((await limit.take('one')).exceeded).toBe(true);
    expect((await limit.take('two')).exceeded).toBe(false);
  });

  it('gives a refused take back when asked to (refund), counting point by point', async () => {
    const { store } = sharedStore(3);
    const limit = replica(store, 3);
    expect((await limit.take('k', 2, true)).exceeded).toBe(false);
    expect((await limit.take('k', 2, true)).exceeded).toBe(true);
    expect((await limit.take('k', 1, true)).exceeded).toBe(false);
  });
});
