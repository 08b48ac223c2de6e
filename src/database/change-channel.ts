import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import { RetryHandle, retryUntilDone } from '../common/supervisor';
import { EntityManager } from 'typeorm';
import { DatabaseRuntime } from './database';

export interface ChangeHandlers {
  /** A row named by `payload` changed on some replica: drop what is cached of it. */
  evict(payload: string): void;
  /** Notifications may have been missed (the listener was down): drop everything. */
  reset(): void;
}

/**
 * Cache invalidation across replicas through PostgreSQL LISTEN/NOTIFY on one channel: `changed` sends the
 * payload inside the writing transaction (delivered on commit), every replica's listener evicts it. The
 * embedded database belongs to one process, where local eviction is the whole story.
 */
export class ChangeChannel {
  private readonly logger: Logger;
  private listener: Client | null = null;
  private closing = false;
  private reconnecting: RetryHandle | null = null;

  constructor(
    private readonly database: DatabaseRuntime,
    private readonly channel: string,
    private readonly handlers: ChangeHandlers,
  ) {
    this.logger = new Logger(`ChangeChannel:${channel}`);
  }

  /** Call inside the transaction that makes the change. */
  async changed(manager: EntityManager, payload: string): Promise<void> {
    this.handlers.evict(payload);
    if (!this.database.embedded) {
      await manager.query('SELECT pg_notify($1, $2)', [this.channel, payload]);
    }
  }

  /** At boot: the first LISTEN must work (a wrong DATABASE_LISTEN_URL fails the start with its cause). */
  async start(): Promise<void> {
    if (!this.database.embedded) {
      await this.listen();
    }
  }

  async stop(): Promise<void> {
    this.closing = true;
    this.reconnecting?.stop();
    await this.listener?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    const options = this.database.options as { url?: string };
    const client = new Client({ connectionString: this.database.listenUrl ?? options.url });
    client.on('notification', (message) => {
      if (message.payload !== undefined) {
        this.handlers.evict(message.payload);
      }
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.listener = client;
    // Changes made by other replicas while nobody listened were never notified: forget everything.
    this.handlers.reset();
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
    this.handlers.reset();
    void client.end().catch(() => undefined);
    if (this.closing) {
      return;
    }
    this.logger.warn('change listener lost; reconnecting');
    this.reconnecting = retryUntilDone(this.logger, 'change listener reconnect', () => this.listen(), {
      initialMs: 250,
      maxMs: 5000,
    });
  }
}
