import { ChildProcess, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { ApiError } from '../common/api-error';
import { PRELUDE } from './prelude';
import { MODULE_SOURCES } from './modules';
import type { HostHandler, JsonValue, SandboxFailure, SandboxOutcome } from './sandbox.provider';

export interface PoolOptions {
  workers: number;
  timeoutMs: number;
  memoryMb: number;
  /** Runs waiting for a worker; more answer 503 at once. */
  maxQueue: number;
  /** Host calls one run may make, and the size of one call's arguments or result. */
  maxHostCalls: number;
  maxHostBytes: number;
}

interface Job {
  id: number;
  code: string;
  codeHash: string;
  input: string;
  handlers: Record<string, HostHandler>;
  hostCalls: number;
  resolve: (outcome: SandboxOutcome) => void;
}

interface Worker {
  process: ChildProcess;
  ready: boolean;
  /** Said it will exit (its isolate is gone): gets no more runs, and is replaced at once. */
  retiring: boolean;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

const WORKER_SCRIPT = join(__dirname, 'worker', 'sandbox-worker.js');
const MAX_RESULT_BYTES = 4 * 1024 * 1024;
const RESPAWN_BACKOFF_MS = 1000;

/**
 * Worker processes, each with one isolate, fed from a bounded queue. The deadline is kept here, in the
 * host: a run that overruns has its worker killed and replaced, so a promise that never settles, a
 * microtask flood or a hung isolate cannot hold anything but its own worker.
 */
export class WorkerPool {
  private readonly workers: Worker[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: PoolOptions) {
    for (let i = 0; i < options.workers; i++) {
      this.workers.push(this.spawn());
    }
  }

  run(code: string, input: string, handlers: Record<string, HostHandler>): Promise<SandboxOutcome> {
    if (this.closed) {
      return Promise.reject(new ApiError(503, 'The sandbox is shutting down.'));
    }
    if (this.queue.length >= this.options.maxQueue) {
      return Promise.reject(new ApiError(503, 'The sandbox is busy: try again shortly.'));
    }
    const codeHash = createHash('sha256').update(code).digest('hex');
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, code, codeHash, input, handlers, hostCalls: 0, resolve });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) {
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

  private spawn(): Worker {
    const ivmPath = dirname(require.resolve('isolated-vm/package.json'));
    const gypBuildPath = dirname(require.resolve('node-gyp-build/package.json', { paths: [ivmPath] }));
    const child = fork(WORKER_SCRIPT, [], {
      // No secrets: the worker gets no environment at all (no master keys, no DATABASE_URL).
      env: {},
      execArgv: [
        '--no-node-snapshot',
        // No JIT: most V8 exploits are JIT bugs (this also removes WebAssembly). Warm runs stay fast.
        '--jitless',
        '--no-warnings',
        '--permission',
        '--allow-addons',
        `--allow-fs-read=${dirname(WORKER_SCRIPT)}`,
        `--allow-fs-read=${ivmPath}`,
        `--allow-fs-read=${gypBuildPath}`,
        // node-gyp-build probes this file while locating the addon
        '--allow-fs-read=/etc/alpine-release',
      ],
      serialization: 'json',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const worker: Worker = { process: child, ready: false, retiring: false, job: null, timer: null };
    child.on('message', (message: WorkerMessage) => this.onMessage(worker, message));
    child.on('exit', () => this.onExit(worker));
    child.on('error', () => undefined);
    child.send({
      type: 'init',
      ivmPath,
      memoryMb: this.options.memoryMb,
      prelude: PRELUDE,
      modules: MODULE_SOURCES,
    });
    return worker;
  }

  private dispatch(): void {
    for (const worker of this.workers) {
      if (this.queue.length === 0) {
        return;
      }
      if (worker.ready && worker.job === null) {
        const job = this.queue.shift() as Job;
        worker.job = job;
        worker.timer = setTimeout(() => this.expire(worker, job), this.options.timeoutMs);
        worker.process.send({
          type: 'run',
          id: job.id,
          code: job.code,
          codeHash: job.codeHash,
          input: job.input,
          timeoutMs: this.options.timeoutMs,
        });
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
    job?.resolve(outcome);
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

  private onMessage(worker: Worker, message: WorkerMessage): void {
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
          this.finish(worker, parseOutcome(message));
          this.dispatch();
        }
        return;
      case 'host-call':
        if (worker.job?.id === message.id) {
          void this.hostCall(worker, worker.job, message);
        }
        return;
    }
  }

  private async hostCall(worker: Worker, job: Job, call: HostCallMessage): Promise<void> {
    const reply = (body: { ok: true; value: string } | { ok: false; error: object }): void => {
      if (worker.job === job && worker.process.connected) {
        worker.process.send({ type: 'host-result', id: job.id, callId: call.callId, ...body });
      }
    };
    const handler = Object.prototype.hasOwnProperty.call(job.handlers, call.name)
      ? job.handlers[call.name]
      : undefined;
    if (handler === undefined) {
      reply({ ok: false, error: { status: 400, detail: 'This capability is not available here.' } });
      return;
    }
    if (++job.hostCalls > this.options.maxHostCalls) {
      reply({
        ok: false,
        error: { status: 429, detail: `At most ${this.options.maxHostCalls} calls per run.` },
      });
      return;
    }
    if (call.args.length > this.options.maxHostBytes) {
      reply({ ok: false, error: { status: 413, detail: 'The call arguments are too large.' } });
      return;
    }
    try {
      const args = JSON.parse(call.args) as unknown;
      const value = await handler(Array.isArray(args) ? (args as JsonValue[]) : []);
      const json = JSON.stringify(value ?? null);
      if (json.length > this.options.maxHostBytes) {
        reply({ ok: false, error: { status: 413, detail: 'The call result is too large.' } });
        return;
      }
      reply({ ok: true, value: json });
    } catch (err) {
      const problem =
        err instanceof ApiError
          ? { status: err.status, detail: err.detail, errors: err.errors }
          : { status: 500, detail: 'The call failed.' };
      reply({ ok: false, error: problem });
    }
  }
}

type HostCallMessage = { type: 'host-call'; id: number; callId: number; name: string; args: string };
type WorkerMessage =
  | { type: 'ready' }
  | HostCallMessage
  | { type: 'done'; id: number; ok: boolean; value?: string; error?: SandboxFailure; retire?: boolean };

function parseOutcome(message: { ok: boolean; value?: string; error?: SandboxFailure }): SandboxOutcome {
  if (!message.ok || typeof message.value !== 'string') {
    return { ok: false, error: message.error ?? { kind: 'crashed' } };
  }
  if (message.value.length > MAX_RESULT_BYTES) {
    return { ok: false, error: { kind: 'error', message: 'The result is larger than 4 MB.' } };
  }
  try {
    const outcome = JSON.parse(message.value) as SandboxOutcome;
    if (typeof outcome === 'object' && outcome !== null && (outcome.ok === true || outcome.ok === false)) {
      return outcome;
    }
  } catch {
    // tenant code can replace JSON in its own context: an unreadable answer is its failure, not ours
  }
  return { ok: false, error: { kind: 'error', message: 'The code produced an unreadable result.' } };
}
