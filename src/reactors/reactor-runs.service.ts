import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Principal } from '../access/principal';
import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { CustomHttpResponse } from '../common/custom-http-response';
import { toProblem } from '../common/to-problem';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { TenantCipher } from '../crypto/tenant-cipher.service';
import { Database } from '../database/database.service';
import { JsonValue, SandboxRefused } from '../sandbox/sandbox.provider';
import { AsyncReactResponseDto, ReactorResultDto, ReactRequestDto } from './dto/react.dto';
import { ReactService } from './react.service';
import { ReactorRun } from './reactor-run.entity';
import { ClaimedRun, ReactorRunsRepository } from './reactor-runs.repository';
import { ReactorsService } from './reactors.service';
import { RunShares } from './run-shares';

/** How long a run's result is kept (then the purge job deletes it). */
export const RESULT_TTL_MS = 24 * 60 * 60 * 1000;
/** How often a replica with the scheduled jobs looks for waiting runs (the jobs table's reactor-runs-poll). */
export const POLL_MS = 500;
/** A run still `running` this long after the sandbox limit was cut short (its replica stopped): failed. */
const STALE_AFTER_MS = 60_000;
const REQUEST_SEAL = 'reactor-run-request';
const RESULT_SEAL = 'reactor-run-result';
/** What a finished run stored: the synchronous answer, or the error it would have been. */
type StoredResult = { ok: true; tokens: unknown; raw: unknown } | { ok: false; error: unknown };

/**
 * POST /reactors/{id}/react-async and its results. Runs wait in `reactor_runs`, a claim-once queue; every
 * replica polls and claims them (one replica per run), fairly across tenants (see claim), and
 * runs them through the same sandbox queue as synchronous runs, so the same per-tenant shares hold there.
 * A run is claimed once: one whose replica stopped mid-run is failed, never run a second time.
 */
@Injectable()
export class ReactorRunsService implements OnApplicationShutdown {
  private readonly logger = new Logger('ReactorRuns');
  private readonly shares: RunShares;
  private polling = false;
  private closed = false;

  constructor(
    private readonly runs: ReactorRunsRepository,
    private readonly db: Database,
    private readonly reactors: ReactorsService,
    private readonly react: ReactService,
    private readonly cipher: TenantCipher,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.shares = new RunShares(config.sandboxTenantRunningMax);
  }

  onApplicationShutdown(): void {
    this.closed = true;
  }

  /** Detokenizes and checks the arguments now (errors answer at once), then queues the run. */
  async submit(caller: Principal, reactorId: string, body: ReactRequestDto): Promise<AsyncReactResponseDto> {
    const loaded = await this.reactors.load(caller.tenantId, reactorId);
    const args = await this.react.argsFor(caller, loaded, body);
    const id = randomUUID();
    const now = this.clock.now();
    const row: ReactorRun = {
      tenantId: caller.tenantId,
      id,
      reactorId,
      status: 'pending',
      request: await this.cipher.sealJson(REQUEST_SEAL, caller.tenantId, id, args),
      result: null,
      createdBy: caller.applicationId,
      createdAt: now,
      startedAt: null,
      completedAt: null,
      expiresAt: new Date(now.getTime() + RESULT_TTL_MS),
    };
    // The run and its record commit together: no record of a run that never queued, no unrecorded run.
    await this.db.transaction(async () => {
      await this.runs.insert(row);
      await this.audit.record(
        auditEvent(caller, 'reactor', reactorId, 'react-async', `Reactor invoked asynchronously (run ${id})`),
      );
    });
    // Inside a keyed request's whole transaction the run commits with the request: a poll before that
    // would not see it, and a replica without the scheduled jobs would not look again.
    this.db.whenCommitted(() => this.kick());
    return { id, asyncReactorRequestId: id, status: 'pending' };
  }

  /** Only the application that started a run reads it: to another application it does not exist (404). */
  async result(caller: Principal, reactorId: string, id: string): Promise<ReactorResultDto> {
    const run = await this.runs.findStartedBy(caller.tenantId, reactorId, id, caller.applicationId);
    if (run === null || run.expiresAt.getTime() <= this.clock.now().getTime()) {
      throw ApiError.notFound('Reactor result');
    }
    const base = {
      id: run.id,
      reactor_id: run.reactorId,
      created_at: run.createdAt.toISOString(),
      completed_at: run.completedAt?.toISOString() ?? null,
      expires_at: run.expiresAt.toISOString(),
    };
    if (run.result === null || (run.status !== 'completed' && run.status !== 'failed')) {
      return { ...base, status: 'pending', tokens: null, raw: null, error: null };
    }
    const stored = (await this.cipher.openJson(
      RESULT_SEAL,
      run.tenantId,
      run.id,
      run.result,
    )) as StoredResult;
    return stored.ok
      ? { ...base, status: 'completed', tokens: stored.tokens, raw: stored.raw, error: null }
      : { ...base, status: 'failed', tokens: null, raw: null, error: stored.error };
  }

  /** Results past their 24 hours, deleted (the scheduled purge). */
  async purgeExpired(now: Date): Promise<number> {
    return this.runs.deleteExpired(now);
  }

  /**
   * One polling round now; rounds never overlap. The scheduled jobs (JOBS_ENABLED) call it at boot (runs
   * left by a restart) and every POLL_MS; a replica without them still runs what it queues itself, looking
   * after each submit and each finished run.
   */
  kick(): void {
    if (this.closed || this.polling) {
      return;
    }
    this.polling = true;
    // Not in the transaction of the keyed request that queued a run (whole-transaction.ts).
    this.db
      .outsideRequest(() => this.poll())
      .catch((err: unknown) => this.logger.warn({ err: { type: (err as Error).name } }, 'polling failed'))
      .finally(() => (this.polling = false));
  }

  private async poll(): Promise<void> {
    await this.failStale();
    const room = this.config.sandboxWorkers - this.shares.total;
    if (room <= 0) {
      return;
    }
    for (const claimed of await this.claim(room)) {
      void this.execute(claimed).then(
        (requeued) => this.ran(claimed.tenant_id, requeued),
        (err: unknown) => {
          // Its result could not be stored (a database outage): it stays running, and failStale ends it.
          this.logger.warn({ err: { type: (err as Error).name } }, 'async run not recorded');
          this.ran(claimed.tenant_id, false);
        },
      );
    }
  }

  /**
   * After a run: look again at once, or, when the sandbox turned the run away, only after POLL_MS (looking
   * at once would claim it straight back into the same refusal, a busy loop on the database).
   */
  private ran(tenantId: string, requeued: boolean): void {
    this.shares.finished(tenantId);
    if (!requeued) {
      this.kick();
    } else if (!this.closed) {
      setTimeout(() => this.kick(), POLL_MS).unref();
    }
  }

  /**
   * Claims up to `limit` runs for this replica (public for tests). Fair across tenants and replicas
   * (ClaimOnceQueue.claimFair): a tenant with one run waiting is served before another's hundredth; and no
   * tenant takes more of this replica than its share (RunShares).
   */
  async claim(limit: number): Promise<ClaimedRun[]> {
    const claimed = await this.runs.queue.claimFair(limit, this.shares.allowances(limit));
    for (const run of claimed) {
      this.shares.started(run.tenant_id);
    }
    return claimed;
  }

  /** Runs a claimed run and stores its result; true when the sandbox turned it away (back in the queue). */
  private async execute(claimed: ClaimedRun): Promise<boolean> {
    const { tenant_id: tenantId, id } = claimed;
    let stored: StoredResult;
    try {
      const args = (await this.cipher.openJson(REQUEST_SEAL, tenantId, id, claimed.request)) as {
        [key: string]: JsonValue;
      };
      const loaded = await this.reactors.load(tenantId, claimed.reactor_id);
      const answer = await this.react.run(tenantId, loaded, args);
      stored = { ok: true, tokens: answer.tokens, raw: answer.raw };
    } catch (err) {
      if (err instanceof SandboxRefused) {
        // Turned away before it ran (the sandbox is full): back in the queue.
        await this.runs.queue.release(claimed);
        return true;
      }
      stored = { ok: false, error: errorBody(err) };
    }
    await this.finish(tenantId, id, stored);
    return false;
  }

  private async finish(tenantId: string, id: string, stored: StoredResult): Promise<void> {
    await this.runs.queue.complete({ tenant_id: tenantId, id }, stored.ok ? 'completed' : 'failed', {
      result: await this.cipher.sealJson(RESULT_SEAL, tenantId, id, stored),
    });
  }

  /** Runs left `running` by a replica that stopped: failed, since their code may have run already. */
  private async failStale(): Promise<void> {
    const before = new Date(this.clock.now().getTime() - this.config.sandboxTimeoutMs - STALE_AFTER_MS);
    for (const run of await this.runs.queue.claimedBefore(before, 100)) {
      await this.finish(run.tenant_id, run.id, {
        ok: false,
        error: toProblem(new ApiError(500, 'The run was interrupted: the vault stopped while it ran.')),
      });
    }
  }
}

function errorBody(err: unknown): unknown {
  if (err instanceof CustomHttpResponse) {
    return { status: err.status, headers: err.headers, body: err.body };
  }
  return toProblem(err);
}
