import { WorkerPool } from '../../src/sandbox/worker-pool';
import type { HostHandler, JsonValue, SandboxOutcome } from '../../src/sandbox/sandbox.provider';

/** A small real pool (worker processes, isolates) for sandbox-level tests. */
export function testPool(overrides: Partial<ConstructorParameters<typeof WorkerPool>[0]> = {}): WorkerPool {
  return new WorkerPool({
    workers: 2,
    timeoutMs: 1500,
    memoryMb: 64,
    maxQueue: 20,
    tenantMaxQueue: 20,
    tenantMaxRunning: 1,
    maxHostCalls: 20,
    maxHostBytes: 100_000,
    ...overrides,
  });
}

export function runIn(
  pool: WorkerPool,
  code: string,
  req: Record<string, JsonValue> = { args: {}, configuration: {} },
  bt?: Record<string, HostHandler>,
): Promise<SandboxOutcome> {
  return pool.run({
    tenant: 'tenant-a',
    code,
    input: JSON.stringify({ req, bt: bt !== undefined }),
    handlers: bt ?? {},
  });
}
