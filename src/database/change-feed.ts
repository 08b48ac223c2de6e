import { Global, Inject, Injectable, Logger, Module, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { causeOf, RetryHandle, retryUntilDone, runDetached } from '../common/supervisor';
import { DATABASE_RUNTIME } from './database-info.module';
import { DatabaseRuntime } from './database';
import { Database } from './database.service';
import { PgSsl } from './tls';

export interface ChangeHandlers {
  /** A row named by `payload` changed on some replica: drop what is cached of it. */
  evict(payload: string): void;
  /** Notifications may have been missed (the listener was down or they stopped arriving): drop everything. */
  reset(): void;
}

/**
 * What the feed can promise about changes made by other replicas:
 * - `local`: the embedded database belongs to this process; local eviction is the whole story.
 * - `verified`: the last probe sent through the pool arrived on the listener.
 * - `unverified`: listening, the first probe has not come back yet.
 * - `silent`: listening, but probes do not arrive (a pooler in transaction mode between the two).
 * - `down`: the listening connection is lost and being re-established.
 */
export type FeedState = 'local' | 'verified' | 'unverified' | 'silent' | 'down';

/** Cache lifetime while invalidations cannot be trusted to arrive: the bound on honouring a revoked key. */
export const UNTRUSTED_CACHE_TTL_MS = 1000;
/** How often a listening feed checks that a NOTIFY sent through the pool reaches it (the jobs table's change-feed-probe). */
export const PROBE_EVERY_MS = 15_000;
/** How long a probe may take before notifications count as not arriving. */
export const PROBE_WAIT_MS = 2000;
const PROBE_CHANNEL = 'tv_change_probe';

/** One channel of the feed, as a cache uses it. */
export interface ChangeChannel {
  /** Call inside the transaction that makes the change: evicts here now, on other replicas on commit. */
  changed(payload: string): Promise<void>;
  /** How long a new cache entry may live: `normalMs` while invalidations arrive, at most 1 s otherwise. */
  ttl(normalMs: number): number;
}

/**
 * Cache invalidation across replicas through PostgreSQL LISTEN/NOTIFY: one listening connection
 * (DATABASE_LISTEN_URL, else DATABASE_URL) for every channel. A NOTIFY sent inside the writing transaction
 * is delivered on commit and every replica's listener evicts what it names.
 *
 * Two ways this can fail quietly are watched for. The listening connection can break (a failover): it is
 * re-established with backoff and every cache is dropped, since changes made meanwhile were never notified.
 * And notifications can stop arriving on a connection that still works, as when DATABASE_URL goes through a
 * pooler in transaction mode: a probe NOTIFY sent through the pool at boot and every 15 s must come back
 * within 2 s. Until it does, caches keep entries for at most 1 s, so a revoked key stops working within a
 * second anyway, and /health/ready reports the feed as degraded.
 */
@Injectable()
export class ChangeFeed implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ChangeFeed');
  private readonly subscribers = new Map<string, ChangeHandlers>();
  private listener: Client | null = null;
  private reconnecting: RetryHandle | null = null;
  private readonly probesInFlight = new Map<string, () => void>();
  private current: FeedState;
  private closing = false;

  constructor(
    @Inject(DATABASE_RUNTIME) private readonly database: DatabaseRuntime,
    private readonly db: Database,
  ) {
    this.current = database.embedded ? 'local' : 'unverified';
  }

  get state(): FeedState {
    return this.current;
  }

  /** Invalidations from other replicas arrive (or there are no other replicas). */
  get trusted(): boolean {
    return this.current === 'local' || this.current === 'verified';
  }

  subscribe(channel: string, handlers: ChangeHandlers): ChangeChannel {
    if (!/^[a-z_]{1,63}$/.test(channel) || this.subscribers.has(channel) || channel === PROBE_CHANNEL) {
      throw new Error(`invalid or duplicate change channel ${channel}`);
    }
    this.subscribers.set(channel, handlers);
    if (this.listener !== null) {
      const listener = this.listener;
      runDetached(this.logger, `LISTEN ${channel}`, () => listener.query(`LISTEN ${channel}`));
    }
    return {
      changed: async (payload) => {
        handlers.evict(payload);
        if (!this.database.embedded) {
          await this.db.query('SELECT pg_notify($1, $2)', [channel, payload]);
        }
      },
      ttl: (normalMs) => (this.trusted ? normalMs : Math.min(normalMs, UNTRUSTED_CACHE_TTL_MS)),
    };
  }

  /** At boot the first LISTEN must work: a wrong DATABASE_LISTEN_URL fails the start with its cause. */
  async onModuleInit(): Promise<void> {
    if (this.database.embedded) {
      return;
    }
    await this.listen();
    // Known before the first request: behind a pooler this costs the probe's 2 s wait, once.
    await this.probe().catch((err: unknown) =>
      this.logger.warn(`change notification probe failed: ${causeOf(err)}`),
    );
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    this.reconnecting?.stop();
    await this.listener?.end().catch(() => undefined);
  }

  /** Sends a NOTIFY through the pool and waits for the listener to hear it. Resolves to the new state. */
  async probe(): Promise<FeedState> {
    const listener = this.listener;
    if (listener === null) {
      return this.current;
    }
    const nonce = randomUUID();
    let heard!: () => void;
    const arrived = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), PROBE_WAIT_MS);
      heard = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
    this.probesInFlight.set(nonce, heard);
    try {
      await this.db.query('SELECT pg_notify($1, $2)', [PROBE_CHANNEL, nonce]);
      const delivered = await arrived;
      if (this.listener === listener) {
        this.become(delivered ? 'verified' : 'silent');
      }
    } finally {
      this.probesInFlight.delete(nonce);
    }
    return this.current;
  }

  private probeDetached(): void {
    runDetached(this.logger, 'change notification probe', () => this.probe());
  }

  private become(next: FeedState): void {
    const previous = this.current;
    if (next === previous) {
      return;
    }
    this.current = next;
    if (next === 'silent') {
      this.logger.warn(
        'change notifications sent through DATABASE_URL do not reach the listener (a pooler in ' +
          'transaction mode?); caches now keep entries for at most 1 s. Set DATABASE_LISTEN_URL to a ' +
          'direct connection to the database.',
      );
    } else if (next === 'verified' && previous === 'silent') {
      this.logger.log('change notifications arrive again');
    }
    if (!this.trusted) {
      this.resetAll();
    }
  }

  private resetAll(): void {
    for (const handlers of this.subscribers.values()) {
      handlers.reset();
    }
  }

  private async listen(): Promise<void> {
    const options = this.database.options as { url?: string; ssl?: PgSsl };
    const client = new Client({
      connectionString: this.database.listenUrl ?? options.url,
      ssl: options.ssl ?? false,
    });
    client.on('notification', ({ channel, payload }) => {
      if (payload === undefined) {
        return;
      }
      if (channel === PROBE_CHANNEL) {
        this.probesInFlight.get(payload)?.();
      } else {
        this.subscribers.get(channel)?.evict(payload);
      }
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      for (const channel of [PROBE_CHANNEL, ...this.subscribers.keys()]) {
        await client.query(`LISTEN ${channel}`);
      }
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.listener = client;
    // Changes made by other replicas while nobody listened were never notified: forget everything, and
    // trust the caches again only once a probe shows notifications arrive.
    this.current = 'unverified';
    this.resetAll();
  }

  /**
   * The listening connection broke (a restart, a failover, a network cut): drop the caches, whose
   * invalidations can no longer arrive, and LISTEN again with backoff until it works or the app stops.
   */
  private lost(client: Client): void {
    if (this.listener !== client) {
      return;
    }
    this.listener = null;
    this.become('down');
    void client.end().catch(() => undefined);
    if (this.closing) {
      return;
    }
    this.logger.warn('change listener lost; reconnecting');
    const relisten = async (): Promise<void> => {
      await this.listen();
      this.probeDetached();
    };
    this.reconnecting = retryUntilDone(this.logger, 'change listener reconnect', relisten, {
      initialMs: 250,
      maxMs: 5000,
    });
  }
}

/** The one change feed of the process, injectable everywhere (it belongs to no resource). */
@Global()
@Module({ providers: [ChangeFeed], exports: [ChangeFeed] })
export class ChangeFeedModule {}
