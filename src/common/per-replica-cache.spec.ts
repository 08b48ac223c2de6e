import { PerReplicaCache } from './per-replica-cache';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('PerReplicaCache', () => {
  it('forgets an entry once its time is up', async () => {
    const cache = new PerReplicaCache<{ n: number }>(40, 10);
    cache.set('a', { n: 1 });
    expect(cache.get('a')).toEqual({ n: 1 });
    await sleep(80);
    expect(cache.get('a')).toBeUndefined();
  });

  it('drops the least recently used entry when full', () => {
    const cache = new PerReplicaCache<{ n: number }>(10_000, 2);
    cache.set('a', { n: 1 });
    cache.set('b', { n: 2 });
    cache.get('a');
    cache.set('c', { n: 3 });
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([{ n: 1 }, undefined, { n: 3 }]);
  });

  it('drops the entries whose value matches, and everything on clear', () => {
    const cache = new PerReplicaCache<{ app: string }>(10_000, 10);
    cache.set('k1', { app: 'x' });
    cache.set('k2', { app: 'x' });
    cache.set('k3', { app: 'y' });
    cache.deleteWhere((v) => v.app === 'x');
    expect([cache.get('k1'), cache.get('k2'), cache.get('k3')]).toEqual([undefined, undefined, { app: 'y' }]);
    cache.clear();
    expect(cache.get('k3')).toBeUndefined();
  });
});
