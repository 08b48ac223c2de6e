import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import type { EventEmitter } from 'node:events';
import { Counter, Gauge } from 'prom-client';
import { isDatabaseUnavailable } from '../common/database-unavailable';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ChangeFeed } from '../database/change-feed';
import { Database } from '../database/database.service';
import { MetricsService } from '../metrics/metrics.service';
import { HealthRepository } from './health.repository';

/** A part that is not ready, with a reason safe to show anyone: no secret, no input, no driver text. */
export class NotReady extends Error {}

/** This build's migrations are not all applied (MIGRATIONS_RUN=false): data routes answer 503 until they are. */
export class MigrationsPending extends NotReady {}

/** `work`, or a NotReady rejection once `ms` have passed (a query on a connection that went silent). */
export function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NotReady(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Whether the database answers, for /health/ready and /metrics (`token_vault_db_reachable`). A reconnect
 * (`token_vault_db_reconnects_total`) is the database answering again after the vault lost it: a new
 * connection or a passing check after a pooled connection dropped (a restart, a failover, sessions killed)
 * or a check found it unreachable.
 */
@Injectable()
export class DatabaseHealth implements OnModuleInit {
  private reachable = true;
  private migrated = false;
  private readonly reconnects: Counter;

  constructor(
    private readonly db: Database,
    private readonly statements: HealthRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    metrics: MetricsService,
    feed: ChangeFeed,
  ) {
    this.reconnects = new Counter({
      name: 'token_vault_db_reconnects_total',
      help: 'Times the database answered again after it was lost (a dropped connection or a failed check)',
      registers: [metrics.registry],
    });
    const answers = (): Promise<boolean> =>
      this.check().then(
        () => true,
        () => false,
      );
    new Gauge({
      name: 'token_vault_db_reachable',
      help: 'Whether the database answered a check at scrape time (1) or not (0)',
      registers: [metrics.registry],
      async collect() {
        this.set((await answers()) ? 1 : 0);
      },
    });
    new Gauge({
      name: 'token_vault_change_notifications_trusted',
      help: 'Whether change notifications from other replicas are known to arrive (1), or caches live at most 1 s (0)',
      registers: [metrics.registry],
      collect() {
        this.set(feed.trusted ? 1 : 0);
      },
    });
  }

  onModuleInit(): void {
    // The pg pool behind TypeORM: `error` is an idle connection lost, `connect` a new connection made.
    const pool = (this.db.source.driver as unknown as { master?: EventEmitter }).master;
    pool?.on('error', () => this.observe(false));
    pool?.on('connect', () => this.observe(true));
  }

  /** Resolves when `SELECT 1` answers within the connect timeout; NotReady otherwise. */
  async check(): Promise<void> {
    try {
      await within(this.statements.ping(), this.config.databaseConnectTimeoutMs);
      this.observe(true);
    } catch (err) {
      this.observe(false);
      throw err instanceof NotReady || isDatabaseUnavailable(err) ? new NotReady('not reachable') : err;
    }
  }

  /** Every migration of this build is known to be applied (checkMigrations passed once). */
  get migrationsApplied(): boolean {
    return this.migrated;
  }

  /**
   * Resolves when every migration of this build is applied (with MIGRATIONS_RUN=false the operator applies
   * them); MigrationsPending when some are not. Once they are, they stay applied: later checks cost nothing.
   */
  async checkMigrations(): Promise<void> {
    if (this.migrated) {
      return;
    }
    const migrations = this.db.source.migrations;
    const names = await within(
      this.statements.appliedMigrations(),
      this.config.databaseConnectTimeoutMs,
    ).catch((err: unknown) => {
      // 42P01: no migrations table, a database never migrated.
      const code = (err as { driverError?: { code?: string } }).driverError?.code;
      throw code === '42P01'
        ? new MigrationsPending(`${migrations.length} pending (npm run migration:run)`)
        : new NotReady('not known (the migrations table cannot be read)');
    });
    const applied = new Set(names);
    const pending = migrations.filter(
      (migration) => !applied.has(migration.name ?? migration.constructor.name),
    );
    if (pending.length > 0) {
      throw new MigrationsPending(`${pending.length} pending (npm run migration:run)`);
    }
    this.migrated = true;
  }

  private observe(reachable: boolean): void {
    if (reachable && !this.reachable) {
      this.reconnects.inc();
    }
    this.reachable = reachable;
  }
}
