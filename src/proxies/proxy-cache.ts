import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ChangeChannel } from '../database/change-channel';
import { DATABASE_RUNTIME } from '../database/database-info.module';
import { DatabaseRuntime } from '../database/database';
import type { LoadedProxy } from './proxies.service';

/** Bound on staleness if a replica ever misses an invalidation. */
const TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;
const CHANNEL = 'tv_proxy_changed';

interface Entry {
  proxy: LoadedProxy;
  expires: number;
}

/**
 * Configured proxies by key hash, so routing a /proxy request costs no database round trip (and no
 * decryption). An update or deletion evicts the proxy here at once and on other replicas on commit.
 */
@Injectable()
export class ProxyCache implements OnModuleInit, OnModuleDestroy {
  private readonly byHash = new Map<string, Entry>();
  private readonly channel: ChangeChannel;

  constructor(@Inject(DATABASE_RUNTIME) database: DatabaseRuntime) {
    this.channel = new ChangeChannel(database, CHANNEL, {
      evict: (proxyId) => this.evict(proxyId),
      reset: () => this.byHash.clear(),
    });
  }

  get(keyHash: string): LoadedProxy | undefined {
    const entry = this.byHash.get(keyHash);
    if (entry === undefined || entry.expires < Date.now()) {
      this.byHash.delete(keyHash);
      return undefined;
    }
    return entry.proxy;
  }

  set(keyHash: string, proxy: LoadedProxy): void {
    if (this.byHash.size >= MAX_ENTRIES) {
      this.byHash.delete(this.byHash.keys().next().value as string);
    }
    this.byHash.set(keyHash, { proxy, expires: Date.now() + TTL_MS });
  }

  /** Call inside the transaction that changes or deletes the proxy. */
  changed(manager: EntityManager, proxyId: string): Promise<void> {
    return this.channel.changed(manager, proxyId);
  }

  onModuleInit(): Promise<void> {
    return this.channel.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.channel.stop();
  }

  private evict(proxyId: string): void {
    for (const [hash, entry] of this.byHash) {
      if (entry.proxy.proxy.id === proxyId) {
        this.byHash.delete(hash);
      }
    }
  }
}
