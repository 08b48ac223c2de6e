import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Principal } from '../auth/principal';
import { DATABASE_RUNTIME } from '../database/database-info.module';
import { ChangeChannel } from '../database/change-channel';
import { DatabaseRuntime } from '../database/database';

/** Bound on staleness if a replica ever misses an invalidation (its listener connection was down). */
const TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;
const CHANNEL = 'tv_application_changed';

interface Entry {
  principal: Principal;
  expires: number;
}

/**
 * Authenticated applications by key hash, so a request does not cost a database round trip. A change to an
 * application (rules, permissions, key, deletion) evicts it here at once and, through PostgreSQL
 * NOTIFY sent in the same transaction, on every other replica as soon as that commits.
 */
@Injectable()
export class ApplicationCache implements OnModuleInit, OnModuleDestroy {
  private readonly byHash = new Map<string, Entry>();
  private readonly channel: ChangeChannel;

  constructor(@Inject(DATABASE_RUNTIME) database: DatabaseRuntime) {
    this.channel = new ChangeChannel(database, CHANNEL, {
      evict: (applicationId) => this.evict(applicationId),
      reset: () => this.byHash.clear(),
    });
  }

  get(keyHash: string): Principal | undefined {
    const entry = this.byHash.get(keyHash);
    if (entry === undefined || entry.expires < Date.now()) {
      this.byHash.delete(keyHash);
      return undefined;
    }
    return entry.principal;
  }

  set(keyHash: string, principal: Principal): void {
    if (this.byHash.size >= MAX_ENTRIES) {
      this.byHash.delete(this.byHash.keys().next().value as string);
    }
    this.byHash.set(keyHash, { principal, expires: Date.now() + TTL_MS });
  }

  evict(applicationId: string): void {
    for (const [hash, entry] of this.byHash) {
      if (entry.principal.applicationId === applicationId) {
        this.byHash.delete(hash);
      }
    }
  }

  /** Call inside the transaction that changes the application: evicts here now, elsewhere on commit. */
  changed(manager: EntityManager, applicationId: string): Promise<void> {
    return this.channel.changed(manager, applicationId);
  }

  onModuleInit(): Promise<void> {
    return this.channel.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.channel.stop();
  }
}
