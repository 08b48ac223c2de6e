import type { Command } from '../../src/cli/kit';
import type { TestContext, TestTenant } from './test-app';

export interface LogEntry {
  id: string;
  tenant_id: string;
  actor_id: string | null;
  actor_type: string;
  entity_type: string;
  entity_id: string | null;
  operation: string;
  outcome: string;
  message: string;
  request_id: string | null;
  remote_address: string | null;
  user_agent: string | null;
  created_at: string;
}

/** Every audit record of the tenant straight from the table, oldest first (nothing recorded by reading). */
export async function auditRows(ctx: TestContext, tenantId: string): Promise<LogEntry[]> {
  return ctx.dataSource.query('SELECT * FROM audit_records WHERE tenant_id = $1 ORDER BY created_at, id', [
    tenantId,
  ]);
}

/** The records of one operation on one entity (entity null: on a collection). */
export async function recordsOf(
  ctx: TestContext,
  tenantId: string,
  operation: string,
  entityId: string | null,
): Promise<LogEntry[]> {
  return (await auditRows(ctx, tenantId)).filter(
    (r) => r.operation === operation && r.entity_id === entityId,
  );
}

/**
 * Refusals (401/403) are recorded once the answer is sent, not before it: waits for `count` matching
 * records of the tenant, polling the table (a bounded number of tries, no wall-clock assertion).
 */
export async function eventually<T>(probe: () => Promise<T | null>, tries = 100): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const found = await probe();
    if (found !== null) {
      return found;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the awaited audit record never appeared');
}

export function logsApi(ctx: TestContext, tenant: TestTenant) {
  return (query = '') => ctx.http.get(`/logs${query}`).set('BT-API-KEY', tenant.key);
}

/**
 * Runs a CLI command as `npm run cli` would, on the test's own database (as DATABASE_URL pointing at it would):
 * what it wrote to stdout, and what it threw.
 */
export async function runCli(
  command: Command,
  args: string[],
  ctx: TestContext,
): Promise<{ said: string; error: unknown }> {
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  let error: unknown = undefined;
  try {
    const url = (ctx.database.options as { url: string }).url;
    await command.run(args, { ...ctx.config, databaseUrl: url, databaseListenUrl: url, logLevel: 'silent' });
  } catch (err) {
    error = err;
  } finally {
    spy.mockRestore();
  }
  return { said: lines.join(''), error };
}
