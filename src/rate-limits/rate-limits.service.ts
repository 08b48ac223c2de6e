import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { Counter } from 'prom-client';
import type { Principal } from '../access/principal';
import { clientAddressOf } from '../common/request-context';
import { clientAddressKey } from '../common/server-limits';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import type { LimitPolicy } from '../config/rate-limit-config';
import { DATABASE_RUNTIME } from '../database/database-info.module';
import type { DatabaseRuntime } from '../database/database';
import { MetricsService } from '../metrics/metrics.service';
import { Limit, Usage } from './limit';
import { LimiterStore, redisClient, storeCounter } from './limiter-store';
import { RateLimitCountersRepository } from './rate-limit-counters.repository';
import { rateLimitHeaders, tooManyRequests } from './rate-limit-headers';

/** How often expired counters are deleted from the database store (the jobs table's rate-limit-purge). */
export const PURGE_EVERY_MS = 5 * 60_000;
/**
 * A leased block not drawn from for this long is given back to the shared store (Limit.sweep), looked for
 * as often (the jobs table's rate-limit-lease-sweep).
 */
export const LEASE_IDLE_MS = 2000;

/**
 * Every rate limit of the vault, over one shared store (limiter-store.ts). A store that fails (database or
 * Redis down) never turns requests into errors: each limit then counts per replica (see Limit), because
 * the limits protect capacity and slow guessing, and a per-replica count still does both, while a 503
 * would make a Redis outage a vault outage. Every 429 is counted on /metrics by route and limit.
 */
@Injectable()
export class RateLimits implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimits');
  private readonly store: LimiterStore;
  private readonly limited: Counter<'route' | 'limit'>;
  private readonly failing = new Set<string>();
  private readonly countedRequests = new WeakSet<Request>();
  private readonly all: Limit[];

  readonly application: Limit;
  readonly tenant: Limit;
  /** Requests without a valid BT-API-KEY, by client address: refused before any key lookup when over. */
  readonly unauthenticated: Limit;
  readonly proxyAddress: Limit;
  readonly invitationAccept: Limit;
  /** Unseal shares per address, in the shared store: the bound holds across replicas. */
  readonly unseal: Limit;
  /** /health/ready per address, in this replica's memory: probes cost no store round trip. */
  readonly health: Limit;
  readonly dedupWrites: Limit;
  /** DEDUP_WRITES_PER_MINUTE=0: deduplicating writes are not limited. */
  readonly dedupUnlimited: boolean;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(DATABASE_RUNTIME) database: DatabaseRuntime,
    counters: RateLimitCountersRepository,
    metrics: MetricsService,
  ) {
    const limits = config.rateLimits;
    this.store = chooseStore(config, database, counters, (err) => this.storeFailed('redis', err));
    const limit = (name: string, policy: LimitPolicy, store = this.store): Limit =>
      new Limit(
        name,
        policy,
        storeCounter(store, `${limits.keyPrefix}:${name}`, policy),
        storeCounter({ kind: 'memory' }, name, policy),
        (n, err) => this.storeFailed(n, err),
      );
    this.application = limit('application', limits.application);
    this.tenant = limit('tenant', limits.tenant);
    this.unauthenticated = limit('unauthenticated', limits.unauthenticated);
    this.proxyAddress = limit('proxy-address', limits.proxyAddress);
    this.invitationAccept = limit('invitation-accept', limits.invitationAccept);
    this.unseal = limit('unseal', limits.unseal);
    this.health = limit('health', limits.health, { kind: 'memory' });
    // 0 (unlimited) keeps the old meaning; the library needs at least one point.
    this.dedupWrites = limit('dedup-writes', {
      points: Math.max(1, config.dedupWritesPerMinute),
      seconds: 60,
    });
    this.dedupUnlimited = config.dedupWritesPerMinute === 0;
    this.all = [
      this.application,
      this.tenant,
      this.unauthenticated,
      this.proxyAddress,
      this.invitationAccept,
      this.unseal,
      this.dedupWrites,
    ];
    this.limited = new Counter({
      name: 'token_vault_rate_limited_total',
      help: 'Requests answered 429 by a rate limit, by route template and limit',
      labelNames: ['route', 'limit'],
      registers: [metrics.registry],
    });
  }

  async onModuleInit(): Promise<void> {
    if (this.store.kind === 'redis') {
      await this.store.client.connect().catch((err: unknown) => this.storeFailed('redis', err));
    }
  }

  /** The counters live outside this process (Redis or the database): leased blocks are worth sweeping. */
  get shared(): boolean {
    return this.store.kind !== 'memory';
  }

  /** The counters live in the database, whose expired rows nothing else deletes. */
  get inDatabase(): boolean {
    return this.store.kind === 'postgres';
  }

  /** Gives leased blocks idle for LEASE_IDLE_MS back to the shared store, for the other replicas. */
  async sweepIdleLeases(): Promise<void> {
    await Promise.all(this.all.map((limit) => limit.sweep(LEASE_IDLE_MS)));
  }

  /** Deletes the database store's counters of windows that ended over a minute ago; a failure waits for the next run. */
  async purgeExpired(): Promise<void> {
    if (this.store.kind === 'postgres') {
      await this.store.counters.deleteExpired(Date.now() - 60_000).catch(() => undefined);
    }
  }

  /** Leased blocks go back to the shared store while it is still open, for the replicas that stay. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.all.map((limit) => limit.sweep(0)));
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.store.kind === 'redis') {
      this.store.client.disconnect();
    }
    await Promise.resolve();
  }

  /**
   * The client's address as the per-address limits count it (TRUST_PROXY decides whether X-Forwarded-For
   * is believed): an IPv6 client by its /64, an IPv4-mapped one as IPv4, as connections are counted.
   */
  clientOf(req: Request): string {
    return clientAddressKey(clientAddressOf(req));
  }

  /** From memory only: whether this address is known to be over the unauthenticated limit. */
  addressBlocked(req: Request): boolean {
    return this.unauthenticated.blockedMs(this.clientOf(req)) > 0;
  }

  /** Before any key lookup, from memory only: 429 while this address is over the unauthenticated limit. */
  refuseFloodingAddress(req: Request): void {
    const blocked = this.unauthenticated.blockedMs(this.clientOf(req));
    if (blocked > 0) {
      const usage: Usage = { ...this.usageOf(this.unauthenticated), resetMs: blocked, exceeded: true };
      throw this.refusal(req, usage, [usage]);
    }
  }

  /**
   * A request without a valid BT-API-KEY: counted against its address, once per request (a /proxy call by
   * proxy key is counted before its lookup, and again here if its proxy then asks for a key it lacks);
   * 429 past the limit.
   */
  async countUnauthenticated(req: Request): Promise<void> {
    if (this.countedRequests.has(req)) {
      return;
    }
    this.countedRequests.add(req);
    const usage = await this.unauthenticated.take(this.clientOf(req));
    if (usage.exceeded) {
      throw this.refusal(req, usage, [usage]);
    }
  }

  /**
   * An authenticated caller: its application's and tenant's limits; 429 past either. The answer reports
   * the caller's own (application) limit only: the tenant's remaining quota would show any of its keys,
   * a public one included, the traffic of all the others. A refusal by the tenant limit names it (r=0).
   */
  async admit(principal: Principal, req: Request, res: Response): Promise<void> {
    const [own, tenant] = await Promise.all([
      this.application.take(principal.applicationId),
      this.tenant.take(principal.tenantId),
    ]);
    this.report(req, res, tenant.exceeded && !own.exceeded ? [own, tenant] : [own]);
  }

  /** A call to a require_auth:false proxy: limited per proxy and client address. */
  async admitProxyCall(proxyId: string, req: Request, res: Response): Promise<void> {
    this.report(req, res, [await this.proxyAddress.take(`${proxyId}:${this.clientOf(req)}`)]);
  }

  /** One limit for one key (the invitation page, deduplicating writes); 429 past it. */
  async take(limit: Limit, key: string, req: Request | null, points = 1, refund = false): Promise<void> {
    const usage = await limit.take(key, points, refund);
    if (usage.exceeded) {
      throw this.refusal(req, usage, [usage]);
    }
  }

  private report(req: Request, res: Response, usages: Usage[]): void {
    const exceeded = usages.find((u) => u.exceeded);
    if (exceeded !== undefined) {
      throw this.refusal(req, exceeded, usages);
    }
    res.set(rateLimitHeaders(usages));
  }

  private refusal(req: Request | null, exceeded: Usage, usages: Usage[]): Error {
    const route = (req?.route as { path?: unknown } | undefined)?.path;
    this.limited.inc({ route: typeof route === 'string' ? route : '<unmatched>', limit: exceeded.name });
    return tooManyRequests(exceeded, usages);
  }

  private usageOf(limit: Limit): Usage {
    return { name: limit.name, policy: limit.policy, remaining: 0, resetMs: 0, exceeded: false };
  }

  private storeFailed(limit: string, err: unknown): void {
    if (!this.failing.has(limit)) {
      this.failing.add(limit);
      // Once per limit and minute: an outage must not flood the log.
      setTimeout(() => this.failing.delete(limit), 60_000).unref();
      this.logger.warn(
        `Rate limit store failed (${limit}): counting in this process for now: ${(err as Error).message}`,
      );
    }
  }
}

function chooseStore(
  config: AppConfig,
  database: DatabaseRuntime,
  counters: RateLimitCountersRepository,
  onRedisError: (err: Error) => void,
): LimiterStore {
  if (config.rateLimits.redisUrl !== null) {
    return { kind: 'redis', client: redisClient(config.rateLimits.redisUrl, onRedisError) };
  }
  if (database.embedded) {
    return { kind: 'memory' };
  }
  return { kind: 'postgres', counters };
}
