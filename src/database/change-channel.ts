import { Logger } from '@nestjs/common';
import { Client } from 'pg';
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

  async start(): Promise<void> {
    if (!this.database.embedded) {
      await this.listen();
    }
  }

  async stop(): Promise<void> {
    this.closing = true;
    await this.listener?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    const options = this.database.options as { url?: string };
    const client = new Client({ connectionString: options.url });
    client.on('notification', (message) => {
      if (message.payload !== undefined) {
        this.handlers.evict(message.payload);
      }
    });
    client.on('error', () => {
      this.handlers.reset();
      this.listener = null;
      if (!this.closing) {
        this.logger.warn('change listener lost; reconnecting');
        setTimeout(() => void this.listen().catch(() => undefined), 1000).unref();
      }
    });
    await client.connect();
    await client.query(`LISTEN ${this.channel}`);
    this.handlers.reset();
    this.listener = client;
  }
}
