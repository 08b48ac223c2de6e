import { ApiError } from '../common/api-error';

/** A JSON value: the only thing that crosses the sandbox boundary. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A host capability offered to sandboxed code: JSON arguments in, a JSON value out. */
export type HostHandler = (args: JsonValue[]) => Promise<JsonValue>;

export interface SandboxRequest {
  /** Whose run this is: waiting runs are served round-robin across tenants, with per-tenant caps. */
  tenantId: string;
  /** Aborted when the client has gone: a run still waiting for a worker is dropped. */
  signal?: AbortSignal;
  /** CommonJS: `module.exports = async function (req) { ... }`. */
  code: string;
  /** Becomes the `req` object of the code (`args`, `configuration`, ...). */
  req: { [key: string]: JsonValue };
  /** Handlers for `req.bt` (names `bt.tokens.create`, ...); without them `req.bt` is null. */
  bt?: Record<string, HostHandler>;
  /** Further bridged capabilities (outbound fetch), by name. */
  host?: Record<string, HostHandler>;
  /** A shorter deadline than the sandbox's own (a code reactor's `runtime.timeout`); never a longer one. */
  timeoutMs?: number;
}

/** How a run failed, as data; `failureToError` in sandbox-outcome.ts turns it into the common error. */
export type SandboxFailure =
  | { kind: 'sdk'; name: string; errors: Record<string, string[]> }
  | { kind: 'custom_response'; status: number; headers: unknown; body: unknown }
  | { kind: 'error'; message: string }
  | { kind: 'too_large' }
  | { kind: 'timeout' }
  | { kind: 'memory' }
  | { kind: 'crashed' };

export type SandboxOutcome = { ok: true; value: JsonValue } | { ok: false; error: SandboxFailure };

/**
 * Runs tenant code in isolation. The one implementation today is isolated-vm in worker processes
 * (IsolatedVmSandbox); anything that keeps these guarantees can replace it: a fresh context per run,
 * no host objects, JSON copies only, a wall-clock deadline that also ends promises that never settle.
 */
export abstract class SandboxProvider {
  abstract run(request: SandboxRequest): Promise<SandboxOutcome>;

  /** Whether runs can be served: false when no worker is running or starting (readiness). */
  abstract isUp(): boolean;
}

/** A run turned away before it started (queue full, tenant's share waiting, client gone): it may be retried. */
export class SandboxRefused extends ApiError {}
