import { TtlMap } from './ttl-map';

describe('TtlMap', () => {
  afterEach(() => jest.useRealTimers());

  it('forgets an entry once its time is up', () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const map = new TtlMap<string>(100, 10);
    map.set('a', 'x');
    jest.setSystemTime(1_000_100);
    expect(map.get('a')).toBe('x');
    jest.setSystemTime(1_000_101);
    expect(map.get('a')).toBeUndefined();
  });

  it('drops the oldest entry when full, and entries matching a predicate', () => {
    const map = new TtlMap<number>(10_000, 2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    expect([map.get('a'), map.get('b'), map.get('c')]).toEqual([undefined, 2, 3]);
    map.deleteWhere((v) => v === 3);
    expect(map.get('c')).toBeUndefined();
    map.clear();
    expect(map.get('b')).toBeUndefined();
  });
});
