import { Injectable } from '@nestjs/common';
import { PerReplicaCache } from '../common/per-replica-cache';
import { ChangeChannel, ChangeFeed } from '../database/change-feed';
import type { LoadedProxy } from './loaded-proxy';

/** Bound on staleness if a replica ever misses an invalidation. */
const TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;
const CHANNEL = 'tv_proxy_changed';

/**
 * Configured proxies by key hash, so routing a /proxy request costs no database round trip (and no
 * decryption). An update or deletion evicts the proxy here at once and on other replicas on commit.
 */
@Injectable()
export class ProxyCache {
  private readonly byHash = new PerReplicaCache<LoadedProxy>(TTL_MS, MAX_ENTRIES);
  private readonly channel: ChangeChannel;

  constructor(feed: ChangeFeed) {
    this.channel = feed.subscribe(CHANNEL, {
      evict: (proxyId) => this.evict(proxyId),
      reset: () => this.byHash.clear(),
    });
  }

  get(keyHash: string): LoadedProxy | undefined {
    return this.byHash.get(keyHash);
  }

  set(keyHash: string, proxy: LoadedProxy): void {
    this.byHash.set(keyHash, proxy, this.channel.ttl(TTL_MS));
  }

  /** Call inside the transaction that changes or deletes the proxy. */
  changed(proxyId: string): Promise<void> {
    return this.channel.changed(proxyId);
  }

  private evict(proxyId: string): void {
    this.byHash.deleteWhere((loaded) => loaded.proxy.id === proxyId);
  }
}
