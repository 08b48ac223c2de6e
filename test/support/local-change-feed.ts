import { ChangeFeed, ChangeHandlers } from '../../src/database/change-feed';

/**
 * One replica's change feed, for service tests without the app: a change evicts here, as the real feed does
 * before it notifies the other replicas.
 */
export function localChangeFeed(): ChangeFeed {
  return {
    subscribe: (_channel: string, handlers: ChangeHandlers) => ({
      changed: (payload: string) => Promise.resolve(handlers.evict(payload)),
      ttl: (normalMs: number) => normalMs,
    }),
  } as unknown as ChangeFeed;
}
