import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Client } from 'pg';
import { EntityManager } from 'typeorm';
import { Principal } from '../auth/principal';
import { DATABASE_RUNTIME } from '../database/database-info.module';
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
  private readonly logger = new Logger('ApplicationCache');
  private readonly byHash = new Map<string, Entry>();
  private listener: Client | null = null;
  private closing = false;

  constructor(@Inject(DATABASE_RUNTIME) private readonly database: DatabaseRuntime) {}

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
  async changed(manager: EntityManager, applicationId: string): Promise<void> {
    this.evict(applicationId);
    if (!this.database.embedded) {
      await manager.query('SELECT pg_notify($1, $2)', [CHANNEL, applicationId]);
    }
  }

  async onModuleInit(): Promise<void> {
    // The embedded database is one process: local eviction is the whole story.
    if (!this.database.embedded) {
      await this.listen();
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    await this.listener?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    const options = this.database.options as { url?: string };
    const client = new Client({ connectionString: options.url });
    client.on('notification', (message) => {
      if (message.payload !== undefined) {
        this.evict(message.payload);
      }
    });
    client.on('error', () => {
      // Anything cached may have missed an eviction while the listener was down.
      this.byHash.clear();
      this.listener = null;
      if (!this.closing) {
        this.logger.warn('application change listener lost; reconnecting');
        setTimeout(() => void this.listen().catch(() => undefined), 1000).unref();
      }
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.byHash.clear();
    this.listener = client;
  }
}
