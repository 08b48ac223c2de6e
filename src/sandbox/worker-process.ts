import { ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { SandboxFailure, SandboxOutcome } from './sandbox.provider';

const WORKER_SCRIPT = join(__dirname, 'worker', 'sandbox-worker.js');
/** The largest result a run may return (its JSON, in UTF-8); larger is refused in the worker. */
export const MAX_RESULT_BYTES = 4 * 1024 * 1024;

/** What a worker sends; the body of its frame carries the result (done) or the arguments (host-call). */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'host-call'; id: number; callId: number; name: string }
  | { type: 'done'; id: number; ok: boolean; error?: SandboxFailure; retire?: boolean; isolate?: number };

/** Where isolated-vm lives: the worker loads it from there, and may read nothing else. */
export function ivmLocation(): string {
  return dirname(require.resolve('isolated-vm/package.json'));
}

/**
 * Starts a worker process: no environment at all (no master keys, no DATABASE_URL), the permission
 * model, and a plain pipe on fd 3 for framed messages (worker-frames.ts) instead of Node's IPC channel.
 */
export function startWorkerProcess(): { child: ChildProcess; pipe: Readable & Writable } {
  const ivmPath = ivmLocation();
  const gypBuildPath = dirname(require.resolve('node-gyp-build/package.json', { paths: [ivmPath] }));
  const execArgv = [
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
  ];
  const child = spawn(process.execPath, [...execArgv, WORKER_SCRIPT], {
    env: {},
    stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
  });
  return { child, pipe: child.stdio[3] as Readable & Writable };
}

/** A `done` message and its body as the caller's outcome; the body is parsed only when within the limit. */
export function parseOutcome(message: { ok: boolean; error?: SandboxFailure }, body: Buffer): SandboxOutcome {
  if (!message.ok) {
    return { ok: false, error: message.error ?? { kind: 'crashed' } };
  }
  if (body.length > MAX_RESULT_BYTES) {
    return { ok: false, error: { kind: 'too_large' } };
  }
  try {
    const outcome = JSON.parse(body.toString('utf8')) as SandboxOutcome;
    if (typeof outcome === 'object' && outcome !== null && (outcome.ok === true || outcome.ok === false)) {
      return outcome;
    }
  } catch {
    // tenant code can replace JSON in its own context: an unreadable answer is its failure, not ours
  }
  return { ok: false, error: { kind: 'error', message: 'The code produced an unreadable result.' } };
}
