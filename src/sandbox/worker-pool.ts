import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { Writable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import { FairQueue } from './fair-queue';
import { answerHostCall, HostReply } from './host-calls';
import { PRELUDE } from './prelude';
import { MODULE_SOURCES } from './modules';
import { HostHandler, SandboxOutcome, SandboxRefused } from './sandbox.provider';
import { encodeFrame, FrameReader } from './worker-frames';
import {
  ivmLocation,
  MAX_RESULT_BYTES,
  parseOutcome,
  startWorkerProcess,
  WorkerMessage,
} from './worker-process';

export interface PoolOptions {
  workers: number;
  timeoutMs: number;
  memoryMb: number;
  /** Runs waiting for a worker, all tenants together; more answer 503 at once. */
  maxQueue: number;
  /** Runs of one tenant waiting; more answer 429 at once. */
  tenantMaxQueue: number;
  /**
   * Workers one tenant may hold while other tenants use the sandbox (ran something in the last
   * SHARE_WINDOW_MS); the rest stay free for them. A tenant alone may use every worker.
   */
  tenantMaxRunning: number;
  /** Host calls one run may make, and the size of one call's arguments or result. */
  maxHostCalls: number;
  maxHostBytes: number;
  /** Called for each run refused or dropped before it ran (for metrics). */
  onRejected?: (reason: RejectReason) => void;
}

export type RejectReason = 'queue_full' | 'tenant_queue_full' | 'cancelled';

export interface RunRequest {
  tenant: string;
  code: string;
  input: string;
  handlers: Record<string, HostHandler>;
  signal?: AbortSignal;
  /** Capped by the pool's own timeout. */
  timeoutMs?: number;
}

interface Job extends RunRequest {
  id: number;
  codeHash: string;
  hostCalls: number;
  resolve: (outcome: SandboxOutcome) => void;
  dropped: () => void;
}

interface Worker {
  process: ChildProcess;
  channel: Writable;
  ready: boolean;
  /** Said it will exit (its isolate is gone): gets no more runs, and is replaced at once. */
  retiring: boolean;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

const MAX_HEADER_BYTES = 64 * 1024;
/** How recently another tenant must have run something for a tenant's share to be enforced. */
export const SHARE_WINDOW_MS = 30_000;
const RESPAWN_BACKOFF_MS = 1000;
/** Code texts whose hash is kept (a text is at most the reactor code limit). */
const CODE_HASHES = 64;

/**
 * Worker processes, each with an isolate per tenant it serves (worker/tenant-isolates.js), fed from a bounded
 * queue served round-robin across tenants. The deadline is kept here, in the host: a run that overruns has its
 * worker killed and replaced, so a promise that never settles, a microtask flood or a hung isolate cannot hold
 * anything but its own worker.
 */
export class WorkerPool {
  private readonly workers: Worker[] = [];
  private readonly queue = new FairQueue<Job>();
  private readonly running = new Map<string, number>();
  /** When each tenant last had a run started: who is sharing the workers now. */
  private readonly lastStarted = new Map<string, number>();
  /** code -> its SHA-256, for the most recently run texts. */
  private readonly codeHashes = new LRUCache<string, string>({ max: CODE_HASHES });
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: PoolOptions) {
    for (let i = 0; i < options.workers; i++) {
      this.workers.push(this.spawn());
    }
  }

  run(request: RunRequest): Promise<SandboxOutcome> {
    if (this.closed) {
      return Promise.reject(new SandboxRefused(503, 'The sandbox is shutting down.'));
    }
    const { tenant, signal } = request;
    if (signal?.aborted === true) {
      return Promise.reject(this.refuse('cancelled'));
    }
    if (this.queue.length >= this.options.maxQueue) {
      return Promise.reject(this.refuse('queue_full'));
    }
    if (this.queue.waiting(tenant) >= this.options.tenantMaxQueue) {
      return Promise.reject(this.refuse('tenant_queue_full'));
    }
    const codeHash = this.codeHash(request.code);
    return new Promise((resolve, reject) => {
      const job: Job = {
        ...request,
        id: this.nextId++,
        codeHash,
        hostCalls: 0,
        resolve,
        dropped: () => {
          // The client went away before a worker was free: nobody waits for this run any more.
          if (this.queue.remove(job)) {
            reject(this.refuse('cancelled'));
          }
        },
      };
      signal?.addEventListener('abort', job.dropped, { once: true });
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** The code's SHA-256 (the workers' key for its compiled script), kept for the most recent texts. */
  private codeHash(code: string): string {
    let hash = this.codeHashes.get(code);
    if (hash === undefined) {
      hash = createHash('sha256').update(code).digest('hex');
      this.codeHashes.set(code, hash);
    }
    return hash;
  }

  /** Runs waiting and running now, all tenants together. */
  stats(): { queued: number; running: number } {
    return { queued: this.queue.length, running: this.workers.filter((w) => w.job !== null).length };
  }

  /** Some worker is ready or starting; false while closed, or while every worker is dead and waiting to respawn. */
  up(): boolean {
    return (
      !this.closed && this.workers.some((w) => w.process.exitCode === null && w.process.signalCode === null)
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) {
      job.signal?.removeEventListener('abort', job.dropped);
      job.resolve({ ok: false, error: { kind: 'crashed' } });
    }
    await Promise.all(
      this.workers.map(
        (w) =>
          new Promise<void>((done) => {
            if (w.process.exitCode !== null || w.process.signalCode !== null) {
              done();
              return;
            }
            w.process.once('exit', () => done());
            w.process.kill('SIGKILL');
          }),
      ),
    );
  }

  /** Worker process ids, for tests that kill one from outside. */
  pids(): number[] {
    return this.workers.map((w) => w.process.pid ?? -1);
  }

  private refuse(reason: RejectReason): SandboxRefused {
    this.options.onRejected?.(reason);
    // About one run's time limit frees a worker.
    const retry = { 'Retry-After': String(Math.max(1, Math.ceil(this.options.timeoutMs / 1000))) };
    switch (reason) {
      case 'tenant_queue_full':
        return new SandboxRefused(
          429,
          `Too many runs of this tenant are waiting for the sandbox (at most ${this.options.tenantMaxQueue}): try again shortly.`,
          undefined,
          retry,
        );
      case 'queue_full':
        return new SandboxRefused(503, 'The sandbox is busy: try again shortly.', undefined, retry);
      case 'cancelled':
        return new SandboxRefused(503, 'The run was dropped: the client went away before it started.');
    }
  }

  private spawn(): Worker {
    const { child, pipe } = startWorkerProcess();
    const worker: Worker = {
      process: child,
      channel: pipe,
      ready: false,
      retiring: false,
      job: null,
      timer: null,
    };
    const reader = new FrameReader(
      { headerBytes: MAX_HEADER_BYTES, bodyBytes: Math.max(MAX_RESULT_BYTES, this.options.maxHostBytes) },
      (header, body) => this.onMessage(worker, header as WorkerMessage, body),
      // Only a worker that no longer follows the protocol sends this: it is not trusted with more runs.
      () => child.kill('SIGKILL'),
    );
    pipe.on('data', (chunk: Buffer) => reader.push(chunk));
    pipe.on('error', () => undefined);
    child.on('exit', () => this.onExit(worker));
    child.on('error', () => undefined);
    this.send(worker, {
      type: 'init',
      ivmPath: ivmLocation(),
      memoryMb: this.options.memoryMb,
      maxResultBytes: MAX_RESULT_BYTES,
      maxHostBytes: this.options.maxHostBytes,
      prelude: PRELUDE,
      modules: MODULE_SOURCES,
    });
    return worker;
  }

  private send(worker: Worker, message: object, body?: string): void {
    if (worker.channel.writable) {
      worker.channel.write(encodeFrame(message, body));
    }
  }

  /** Whether a tenant other than `tenant` runs something now or did within SHARE_WINDOW_MS. */
  private othersActive(tenant: string): boolean {
    const since = Date.now() - SHARE_WINDOW_MS;
    for (const [other, at] of this.lastStarted) {
      if (at < since && (this.running.get(other) ?? 0) === 0) {
        this.lastStarted.delete(other);
      } else if (other !== tenant) {
        return true;
      }
    }
    return false;
  }

  private dispatch(): void {
    const { tenantMaxRunning } = this.options;
    for (const worker of this.workers) {
      if (this.queue.length === 0) {
        return;
      }
      if (worker.ready && worker.job === null) {
        const job = this.queue.take(
          (tenant) => (this.running.get(tenant) ?? 0) < tenantMaxRunning,
          (tenant) => !this.othersActive(tenant),
        );
        if (job === undefined) {
          // Only tenants at their share wait, and others use the sandbox: this worker stays free for them.
          return;
        }
        this.lastStarted.set(job.tenant, Date.now());
        job.signal?.removeEventListener('abort', job.dropped);
        this.running.set(job.tenant, (this.running.get(job.tenant) ?? 0) + 1);
        worker.job = job;
        const timeoutMs = Math.min(job.timeoutMs ?? this.options.timeoutMs, this.options.timeoutMs);
        worker.timer = setTimeout(() => this.expire(worker, job), timeoutMs);
        this.send(
          worker,
          {
            type: 'run',
            id: job.id,
            tenant: job.tenant,
            code: job.code,
            codeHash: job.codeHash,
            timeoutMs,
          },
          // As the frame's body, not a string inside the header's JSON: not escaped and parsed twice.
          job.input,
        );
      }
    }
  }

  private expire(worker: Worker, job: Job): void {
    if (worker.job === job) {
      worker.ready = false;
      worker.retiring = true;
      this.finish(worker, { ok: false, error: { kind: 'timeout' } });
      worker.process.kill('SIGKILL');
    }
  }

  private finish(worker: Worker, outcome: SandboxOutcome): void {
    const job = worker.job;
    if (worker.timer !== null) {
      clearTimeout(worker.timer);
      worker.timer = null;
    }
    worker.job = null;
    if (job !== null) {
      const count = (this.running.get(job.tenant) ?? 1) - 1;
      if (count > 0) {
        this.running.set(job.tenant, count);
      } else {
        this.running.delete(job.tenant);
      }
      job.resolve(outcome);
    }
  }

  private onExit(worker: Worker): void {
    const wasReady = worker.ready;
    worker.ready = false;
    if (worker.job !== null) {
      this.finish(worker, { ok: false, error: { kind: 'crashed' } });
    }
    const index = this.workers.indexOf(worker);
    if (index < 0 || this.closed) {
      return;
    }
    // A worker that died before it was ready would die again at once: do not fork in a tight loop.
    const delay = wasReady || worker.retiring ? 0 : RESPAWN_BACKOFF_MS;
    setTimeout(() => {
      if (!this.closed && this.workers[index] === worker) {
        this.workers[index] = this.spawn();
      }
    }, delay).unref();
  }

  private onMessage(worker: Worker, message: WorkerMessage, body: Buffer): void {
    switch (message.type) {
      case 'ready':
        worker.ready = true;
        this.dispatch();
        return;
      case 'done':
        if (worker.job?.id === message.id) {
          if (message.retire === true) {
            worker.ready = false;
            worker.retiring = true;
          }
          this.finish(worker, parseOutcome(message, body));
          this.dispatch();
        }
        return;
      case 'host-call':
        if (worker.job?.id === message.id) {
          const job = worker.job;
          void answerHostCall(job.handlers, message.name, body, ++job.hostCalls, this.options).then(
            (reply: HostReply) => {
              if (worker.job === job) {
                this.send(worker, { type: 'host-result', id: job.id, callId: message.callId, ...reply });
              }
            },
          );
        }
        return;
    }
  }
}
