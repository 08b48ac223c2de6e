import { Inject, Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Database, PoolCounts } from '../database/database.service';

/**
 * The vault's Prometheus registry (one per app, so several apps in one process do not clash). Modules
 * add their own series through `registry` or the helpers here. Labels never carry a token id, key,
 * tenant id or any request content: routes are templates, statuses and outcomes are small fixed sets.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly purgedTokens: Counter;
  readonly sandboxRuns: Counter<'outcome'>;
  readonly proxyUpstream: Histogram<'outcome'>;
  readonly sandboxRejected: Counter<'reason'>;
  private sandboxLoad: () => { queued: number; running: number } = () => ({ queued: 0, running: 0 });

  constructor(database: Database, @Inject(APP_CONFIG) config: AppConfig) {
    collectDefaultMetrics({ register: this.registry, prefix: 'token_vault_' });
    new Gauge({
      name: 'token_vault_build_info',
      help: 'Always 1; the labels say which build runs: version (package.json), commit (VAULT_BUILD_COMMIT), node',
      labelNames: ['version', 'commit', 'node'],
      registers: [this.registry],
    }).set({ version: config.build.version, commit: config.build.commit ?? '', node: config.build.node }, 1);
    this.httpDuration = new Histogram({
      name: 'token_vault_http_request_duration_seconds',
      help: 'HTTP requests by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [this.registry],
    });
    this.purgedTokens = new Counter({
      name: 'token_vault_purged_tokens_total',
      help: 'Expired tokens whose data the purge removed',
      registers: [this.registry],
    });
    this.sandboxRuns = new Counter({
      name: 'token_vault_sandbox_runs_total',
      help: 'Sandboxed code runs (reactors, transforms) by outcome',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.sandboxRejected = new Counter({
      name: 'token_vault_sandbox_rejected_total',
      help: 'Sandbox runs refused or dropped before they ran, by reason (queue_full, tenant_queue_full, cancelled)',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    const load = (): { queued: number; running: number } => this.sandboxLoad();
    new Gauge({
      name: 'token_vault_sandbox_jobs',
      help: 'Sandbox runs waiting for a worker (queued) and holding one (running), all tenants together',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        const { queued, running } = load();
        this.set({ state: 'queued' }, queued);
        this.set({ state: 'running' }, running);
      },
    });
    this.proxyUpstream = new Histogram({
      name: 'token_vault_proxy_upstream_duration_seconds',
      help: 'Time from sending a proxied request to the destination response head, by outcome',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25],
      registers: [this.registry],
    });
    const pool = (): PoolCounts | undefined => database.poolCounts();
    for (const [name, help, read] of [
      [
        'token_vault_db_pool_connections',
        'Database connections in the pool',
        (p: PoolCounts) => p.totalCount,
      ],
      ['token_vault_db_pool_idle', 'Idle database connections in the pool', (p: PoolCounts) => p.idleCount],
      [
        'token_vault_db_pool_waiting',
        'Queries waiting for a database connection',
        (p: PoolCounts) => p.waitingCount,
      ],
    ] as const) {
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          const p = pool();
          this.set(p === undefined ? 0 : read(p));
        },
      });
    }
  }

  /** Where the sandbox gauges read from, once the sandbox has started. */
  watchSandbox(load: () => { queued: number; running: number }): void {
    this.sandboxLoad = load;
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }
}
