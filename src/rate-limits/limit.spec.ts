import { Limit } from './limit';
import { Counter, storeCounter } from './limiter-store';

/** One in-memory count shared by "replicas" (Limit instances) as a store would be, counting its additions. */
function sharedStore(points: number, seconds = 60): { counter: Counter; calls: () => number } {
  const memory = storeCounter({ kind: 'memory' }, 'test', { points, seconds });
  let calls = 0;
  const counter: Counter = {
    shared: true,
    add: (key, taken) => {
      calls += 1;
      return memory.add(key, taken);
    },
    giveBack: (key, given, resetMs) => memory.giveBack(key, given, resetMs),
  };
  return { counter, calls: () => calls };
}

const replica = (counter: Counter, points: number): Limit =>
  new Limit(
    'application',
    { points, seconds: 60 },
    counter,
    storeCounter({ kind: 'memory' }, 'fallback', { points, seconds: 60 }),
    () => undefined,
  );

async function admitted(limit: Limit, key: string, requests: number): Promise<number> {
  let passed = 0;
  for (let i = 0; i < requests; i += 1) {
    if (!(await limit.take(key)).exceeded) {
      passed += 1;
    }
  }
  return passed;
}

async function admittedAtOnce(limit: Limit, key: string, requests: number): Promise<number> {
  const answers = await Promise.all(Array.from({ length: requests }, () => limit.take(key)));
  return answers.filter((u) => !u.exceeded).length;
}

describe('Limit', () => {
  it('never admits more than the limit across replicas, and a busy key costs far fewer store additions', async () => {
    const { counter, calls } = sharedStore(1000);
    const [a, b] = [replica(counter, 1000), replica(counter, 1000)];
    const passed = (await Promise.all([admitted(a, 'app', 700), admitted(b, 'app', 700)])).reduce(
      (x, y) => x + y,
    );
    expect(passed).toBeLessThanOrEqual(1000);
    // What the replicas hold unused is at most one and a half blocks (3 % of the limit) each.
    expect(passed).toBeGreaterThanOrEqual(1000 - 2 * 30);
    expect(calls()).toBeLessThan(200);
  });

  it('holds the limit across replicas under concurrent requests, blocks taken ahead of need included', async () => {
    const { counter } = sharedStore(1000);
    const [a, b] = [replica(counter, 1000), replica(counter, 1000)];
    const passed = (await Promise.all([admittedAtOnce(a, 'app', 900), admittedAtOnce(b, 'app', 900)])).reduce(
      (x, y) => x + y,
    );
    expect(passed).toBeLessThanOrEqual(1000);
    expect(passed).toBeGreaterThanOrEqual(1000 - 2 * 30);
  });

  it('admits exactly the limit from one replica, concurrent requests included', async () => {
    const { counter } = sharedStore(500);
    const limit = replica(counter, 500);
    expect(await admittedAtOnce(limit, 'app', 600)).toBe(500);
    expect((await limit.take('app')).exceeded).toBe(true);
  });

  it('gives an idle block back, and the other replica can then use every point not used', async () => {
    const { counter } = sharedStore(1000);
    const [a, b] = [replica(counter, 1000), replica(counter, 1000)];
    expect(await admitted(a, 'app', 100)).toBe(100);
    // Not idle yet: nothing given back.
    await a.sweep(60_000);
    expect(await admitted(b, 'app', 1000)).toBeLessThan(900);

    const other = sharedStore(1000).counter;
    const [c, d] = [replica(other, 1000), replica(other, 1000)];
    expect(await admitted(c, 'app', 100)).toBe(100);
    await c.sweep(0);
    expect(await admitted(d, 'app', 1000)).toBe(900);
  });

  it('counts a small limit point by point, so two replicas together admit exactly it', async () => {
    const { counter, calls } = sharedStore(5);
    const [a, b] = [replica(counter, 5), replica(counter, 5)];
    expect((await admitted(a, 'app', 3)) + (await admitted(b, 'app', 3))).toBe(5);
    expect(calls()).toBe(6);
  });

  it('keeps other keys apart and reports the remaining allowance', async () => {
    const { counter } = sharedStore(100);
    const limit = replica(counter, 100);
    const first = await limit.take('one');
    expect(first).toMatchObject({ exceeded: false, remaining: 99 });
    await admitted(limit, 'one', 99);
    expect((await limit.take('one')).exceeded).toBe(true);
    expect((await limit.take('two')).exceeded).toBe(false);
  });

  it('gives a refused take back when asked to (refund), counting point by point', async () => {
    const { counter } = sharedStore(3);
    const limit = replica(counter, 3);
    expect((await limit.take('k', 2, true)).exceeded).toBe(false);
    expect((await limit.take('k', 2, true)).exceeded).toBe(true);
    expect((await limit.take('k', 1, true)).exceeded).toBe(false);
  });

  it('counts in this process while the store fails, and reports the failure', async () => {
    const failures: string[] = [];
    const down: Counter = {
      shared: true,
      add: () => Promise.reject(new Error('store down')),
      giveBack: () => Promise.reject(new Error('store down')),
    };
    const limit = new Limit(
      'application',
      { points: 200, seconds: 60 },
      down,
      storeCounter({ kind: 'memory' }, 'fallback', { points: 200, seconds: 60 }),
      (name) => failures.push(name),
    );
    expect(await admitted(limit, 'app', 250)).toBe(200);
    expect(failures[0]).toBe('application');
  });
});
