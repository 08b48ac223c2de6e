import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { MetricsService } from '../metrics/metrics.service';
import { bindToCurrentSpan, inSpan, SpanHandle } from '../tracing/spans';
import { HostHandler, SandboxOutcome, SandboxProvider, SandboxRequest } from './sandbox.provider';
import { WorkerPool } from './worker-pool';

/** isolated-vm isolates in a pool of worker processes (DESIGN §5). */
@Injectable()
export class IsolatedVmSandbox extends SandboxProvider implements OnApplicationShutdown {
  private pool: WorkerPool | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    super();
  }

  run(request: SandboxRequest): Promise<SandboxOutcome> {
    return inSpan('sandbox run', (span) => this.runTraced(request, span));
  }

  /** Host calls (bt, fetch) arrive from a worker's message: bound to the run's span, their spans join it. */
  private async runTraced(request: SandboxRequest, span: SpanHandle): Promise<SandboxOutcome> {
    const handlers: Record<string, HostHandler> = {};
    for (const [name, handler] of Object.entries({ ...(request.host ?? {}), ...(request.bt ?? {}) })) {
      handlers[name] = bindToCurrentSpan(handler);
    }
    const input = JSON.stringify({
      req: request.req,
      bt: request.bt !== undefined,
      fetch: request.host?.fetch !== undefined,
    });
    const outcome = await this.workers().run({
      tenant: request.tenantId,
      code: request.code,
      input,
      handlers,
      signal: request.signal,
      timeoutMs: request.timeoutMs,
    });
    const result = outcome.ok ? 'ok' : outcome.error.kind;
    this.metrics.sandboxRuns.inc({ outcome: result });
    span.setAttribute('token_vault.sandbox.outcome', result);
    if (!outcome.ok) {
      span.fail();
    }
    return outcome;
  }

  /** A pool not started yet is up: it starts on the first run. */
  isUp(): boolean {
    return this.pool === null || this.pool.up();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool?.close();
    this.pool = null;
  }

  /** Started on first use: an app that never runs tenant code forks no processes. */
  private workers(): WorkerPool {
    this.pool ??= new WorkerPool({
      workers: this.config.sandboxWorkers,
      timeoutMs: this.config.sandboxTimeoutMs,
      memoryMb: this.config.sandboxMemoryMb,
      maxQueue: this.config.sandboxQueueMax,
      tenantMaxQueue: this.config.sandboxTenantQueueMax,
      tenantMaxRunning: this.config.sandboxTenantRunningMax,
      maxHostCalls: 100,
      maxHostBytes: 1024 * 1024,
      onRejected: (reason) => this.metrics.sandboxRejected.inc({ reason }),
    });
    const pool = this.pool;
    this.metrics.watchSandbox(() => pool.stats());
    return this.pool;
  }
}
