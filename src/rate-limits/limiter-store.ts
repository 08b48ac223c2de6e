import Redis from 'ioredis';
import {
  RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import type { LimitPolicy } from '../config/rate-limit-config';
import { RATE_LIMIT_TABLE, RateLimitCountersRepository } from './rate-limit-counters.repository';

/**
 * Where the counters live. Redis when REDIS_URL is set; PostgreSQL otherwise, so every replica on one
 * database shares them; in process memory on the embedded database (one process by construction).
 */
export type LimiterStore =
  | { kind: 'memory' }
  | { kind: 'postgres'; counters: RateLimitCountersRepository }
  | { kind: 'redis'; client: Redis };

/** A key's fixed-window count after an addition, and the milliseconds left in its window. */
export interface WindowCount {
  count: number;
  resetMs: number;
}

/**
 * One limit's counters: the library's fixed-window counter (one upsert, or one Redis script, per addition),
 * plus taking points back within the same window. `shared`: the counter lives outside this process, so a
 * round trip is worth saving by leasing points in blocks (Limit).
 */
export interface Counter {
  readonly shared: boolean;
  /** Adds `points` to `key`'s count (also past the limit); rejects when the store is unreachable. */
  add(key: string, points: number): Promise<WindowCount>;
  /**
   * Takes `points` back from `key`'s count if its window is still the one that ends `resetMs` from now (a
   * later window is more than half a window apart, so points never move into the next window).
   */
  giveBack(key: string, points: number, resetMs: number): Promise<void>;
}

/** The same in Redis: the key's remaining time must be near the caller's (ARGV[2] ± ARGV[3] ms). */
const GIVE_BACK_LUA = `local ttl = redis.call('pttl', KEYS[1])
if ttl > 0 and math.abs(ttl - tonumber(ARGV[2])) <= tonumber(ARGV[3]) then
  local left = redis.call('decrby', KEYS[1], ARGV[1])
  if left < 0 then redis.call('set', KEYS[1], 0, 'KEEPTTL') end
end
return 0`;

/** One counter for `policy`, its keys under `keyPrefix`. */
export function storeCounter(store: LimiterStore, keyPrefix: string, policy: LimitPolicy): Counter {
  const limiter = storeLimiter(store, keyPrefix, policy);
  const halfWindow = Math.floor((policy.seconds * 1000) / 2);
  const add = async (key: string, points: number): Promise<WindowCount> => {
    let res: RateLimiterRes;
    try {
      res = await limiter.consume(key, points);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        throw err;
      }
      res = err;
    }
    return { count: res.consumedPoints, resetMs: res.msBeforeNext };
  };
  switch (store.kind) {
    case 'memory':
      return {
        shared: false,
        add,
        giveBack: async (key, points) => {
          await limiter.reward(key, points);
        },
      };
    case 'postgres':
      return {
        shared: true,
        add,
        giveBack: async (key, points, resetMs) => {
          const now = Date.now();
          await store.counters.giveBack(limiter.getKey(key), points, now, now + resetMs, halfWindow);
        },
      };
    case 'redis':
      return {
        shared: true,
        add,
        giveBack: async (key, points, resetMs) => {
          await store.client.eval(GIVE_BACK_LUA, 1, limiter.getKey(key), points, resetMs, halfWindow);
        },
      };
  }
}

/** One library limiter for `policy`, its keys under `keyPrefix`. */
export function storeLimiter(
  store: LimiterStore,
  keyPrefix: string,
  policy: LimitPolicy,
): RateLimiterAbstract {
  const common = { keyPrefix, points: policy.points, duration: policy.seconds };
  switch (store.kind) {
    case 'memory':
      return new RateLimiterMemory(common);
    case 'postgres':
      return new RateLimiterPostgres({
        ...common,
        storeClient: store.counters.libraryClient,
        storeType: 'pool',
        tableName: RATE_LIMIT_TABLE,
        // Created by a migration; expired rows are purged by the jobs table's rate-limit-purge.
        tableCreated: true,
        clearExpiredByTimeout: false,
      });
    case 'redis':
      return new RateLimiterRedis({ ...common, storeClient: store.client });
  }
}

/** A Redis client that fails fast while disconnected (the limit then counts in process) and never throws. */
export function redisClient(url: string, onError: (err: Error) => void): Redis {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
  });
  client.on('error', onError);
  return client;
}
