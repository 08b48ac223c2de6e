import Redis from 'ioredis';
import type { Pool, QueryConfig } from 'pg';
import {
  RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
} from 'rate-limiter-flexible';
import type { LimitPolicy } from '../config/rate-limit-config';

/** The table the migration 1763805000000-rate-limits creates. */
export const RATE_LIMIT_TABLE = 'rate_limits';

/**
 * Where the counters live. Redis when REDIS_URL is set; PostgreSQL otherwise, so every replica on one
 * database shares them; in process memory on the embedded database (one process by construction).
 */
export type LimiterStore =
  | { kind: 'memory' }
  | { kind: 'postgres'; pool: Pool; preparedStatements: boolean }
  | { kind: 'redis'; client: Redis };

/**
 * The library's query shape, handed to the pool; statement names are dropped when prepared statements are
 * off (DATABASE_PREPARED_STATEMENTS=false behind a pooler in transaction mode).
 */
function postgresClient(pool: Pool, preparedStatements: boolean): { query: (q: QueryConfig) => unknown } {
  return {
    query: (q: QueryConfig) => pool.query(preparedStatements ? q : { text: q.text, values: q.values }),
  };
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
        storeClient: postgresClient(store.pool, store.preparedStatements),
        storeType: 'pool',
        tableName: RATE_LIMIT_TABLE,
        // Created by a migration; expired rows are purged by RateLimits on a timer of its own.
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
