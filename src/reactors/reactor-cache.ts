import { Injectable } from '@nestjs/common';
import { PerReplicaCache } from '../common/per-replica-cache';
import { ChangeChannel, ChangeFeed } from '../database/change-feed';
import { ReactorFormulasService } from '../reactor-formulas/reactor-formulas.service';
import type { LoadedReactor } from './load-reactor';

/** Bound on staleness if a replica ever misses an invalidation. */
const TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;
const CHANNEL = 'tv_reactor_changed';

/**
 * Loaded reactors (the code they run, their configuration in clear) by tenant and id, so an invocation costs
 * no database round trip and no decryption for them. A change to a reactor or to the formula it runs evicts
 * it here at once and on other replicas on commit. Entries are shared by concurrent invocations: read only.
 */
@Injectable()
export class ReactorCache {
  private readonly byId = new PerReplicaCache<LoadedReactor>(TTL_MS, MAX_ENTRIES);
  private readonly channel: ChangeChannel;

  constructor(feed: ChangeFeed, formulas: ReactorFormulasService) {
    this.channel = feed.subscribe(CHANNEL, {
      evict: (id) => this.evict(id),
      reset: () => this.byId.clear(),
    });
    formulas.onChange((formulaId) => this.changed(formulaId));
  }

  get(tenantId: string, id: string): LoadedReactor | undefined {
    return this.byId.get(`${tenantId}:${id}`);
  }

  set(tenantId: string, id: string, loaded: LoadedReactor): void {
    this.byId.set(`${tenantId}:${id}`, loaded, this.channel.ttl(TTL_MS));
  }

  /** Call inside the transaction that changes or deletes a reactor, or a formula (`id`: either's). */
  changed(id: string): Promise<void> {
    return this.channel.changed(id);
  }

  private evict(id: string): void {
    this.byId.deleteWhere(({ reactor }) => reactor.id === id || reactor.formulaId === id);
  }
}
