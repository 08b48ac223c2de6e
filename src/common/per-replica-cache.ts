import { LRUCache } from 'lru-cache';

/**
 * The shape of the per-replica caches (applications, proxies, reactors): lru-cache, bounded (the least recently used
 * entry makes room) and expiring, plus eviction by value for the change notifications of other replicas.
 */
export class PerReplicaCache<V extends object> {
  private readonly cache: LRUCache<string, V>;

  constructor(ttlMs: number, maxEntries: number) {
    this.cache = new LRUCache<string, V>({ max: maxEntries, ttl: ttlMs });
  }

  get(key: string): V | undefined {
    return this.cache.get(key);
  }

  /** Keeps `value` for the cache's lifetime, or for `ttlMs` when given. */
  set(key: string, value: V, ttlMs?: number): void {
    this.cache.set(key, value, ttlMs === undefined ? undefined : { ttl: ttlMs });
  }

  /** Drops every entry whose value matches. */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, value] of this.cache.entries()) {
      if (matches(value)) {
        this.cache.delete(key);
      }
    }
  }

  clear(): void {
    this.cache.clear();
  }
}
