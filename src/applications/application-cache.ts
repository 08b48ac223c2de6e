import { Injectable } from '@nestjs/common';
import { Principal } from '../access/principal';
import { PerReplicaCache } from '../common/per-replica-cache';
import { ChangeChannel, ChangeFeed } from '../database/change-feed';

/** Bound on staleness if a replica ever misses an invalidation (its listener connection was down). */
const TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;
const CHANNEL = 'tv_application_changed';

/**
 * Authenticated applications by key hash, so a request does not cost a database round trip. A change to an
 * application (rules, permissions, key, deletion) evicts it here at once and, through PostgreSQL
 * NOTIFY sent in the same transaction, on every other replica as soon as that commits.
 */
@Injectable()
export class ApplicationCache {
  private readonly byHash = new PerReplicaCache<Principal>(TTL_MS, MAX_ENTRIES);
  private readonly channel: ChangeChannel;

  constructor(feed: ChangeFeed) {
    this.channel = feed.subscribe(CHANNEL, {
      evict: (applicationId) => this.evict(applicationId),
      reset: () => this.byHash.clear(),
    });
  }

  get(keyHash: string): Principal | undefined {
    return this.byHash.get(keyHash);
  }

  set(keyHash: string, principal: Principal): void {
    this.byHash.set(keyHash, principal, this.channel.ttl(TTL_MS));
  }

  evict(applicationId: string): void {
    this.byHash.deleteWhere((principal) => principal.applicationId === applicationId);
  }

  /** Call inside the transaction that changes the application: evicts here now, elsewhere on commit. */
  changed(applicationId: string): Promise<void> {
    return this.channel.changed(applicationId);
  }
}
