import { FairQueue } from './fair-queue';

interface Job {
  tenant: string;
  n: number;
}

function queueOf(...jobs: [string, number][]): FairQueue<Job> {
  const queue = new FairQueue<Job>();
  for (const [tenant, n] of jobs) {
    queue.push({ tenant, n });
  }
  return queue;
}

const anyone = (): boolean => true;

describe('FairQueue', () => {
  it('serves tenants round-robin, each in order of arrival', () => {
    const queue = queueOf(['a', 1], ['a', 2], ['a', 3], ['b', 1], ['c', 1], ['b', 2]);
    const served = Array.from({ length: 6 }, () => queue.take(anyone)).map((j) => `${j?.tenant}${j?.n}`);
    expect(served).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    expect(queue.length).toBe(0);
    expect(queue.take(anyone)).toBeUndefined();
  });

  it("serves a tenant with one waiting run before another tenant's hundredth", () => {
    const queue = new FairQueue<Job>();
    for (let n = 1; n <= 100; n++) {
      queue.push({ tenant: 'hostile', n });
    }
    queue.take(anyone);
    queue.push({ tenant: 'victim', n: 1 });
    // The hostile lane had its turn order before the victim arrived: at most one more of it goes first.
    expect([queue.take(anyone), queue.take(anyone)]).toContainEqual({ tenant: 'victim', n: 1 });
    expect(queue.waiting('hostile')).toBe(98);
  });

  it('passes over tenants that are not eligible, and serves them past their share only where allowed', () => {
    const queue = queueOf(['a', 1], ['a', 2], ['b', 1]);
    expect(queue.take((t) => t !== 'a')).toEqual({ tenant: 'b', n: 1 });
    expect(
      queue.take(
        (t) => t !== 'a',
        () => false,
      ),
    ).toBeUndefined();
    expect(queue.take((t) => t !== 'a')).toEqual({ tenant: 'a', n: 1 });
    expect(queue.length).toBe(1);
  });

  it('counts waiting runs per tenant, removes one out of turn, and drains', () => {
    const queue = queueOf(['a', 1], ['a', 2], ['b', 1]);
    expect([queue.waiting('a'), queue.waiting('b'), queue.waiting('c')]).toEqual([2, 1, 0]);
    const b = queue.take((t) => t === 'b') as Job;
    expect(queue.remove(b)).toBe(false);
    queue.push(b);
    expect(queue.remove(b)).toBe(true);
    expect(queue.waiting('b')).toBe(0);
    expect(queue.drain().map((j) => j.n)).toEqual([1, 2]);
    expect(queue.length).toBe(0);
  });
});
