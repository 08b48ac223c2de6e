import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { MetricsService } from '../metrics/metrics.service';
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

  async run(request: SandboxRequest): Promise<SandboxOutcome> {
    const handlers: Record<string, HostHandler> = { ...(request.host ?? {}), ...(request.bt ?? {}) };
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
    this.metrics.sandboxRuns.inc({ outcome: outcome.ok ? 'ok' : outcome.error.kind });
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
