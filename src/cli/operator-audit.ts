import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service';

/**
 * Records an operator command in the audit trail of each tenant it touched (actor_type system); every
 * tenant when `tenantIds` is 'all' (a master key concerns them all).
 */
export async function recordOperatorAction(
  app: INestApplicationContext,
  tenantIds: readonly string[] | 'all',
  operation: string,
  message: string,
): Promise<void> {
  const all: { id: string }[] =
    tenantIds === 'all' ? await app.get(DataSource).query('SELECT id FROM tenants') : [];
  const ids = tenantIds === 'all' ? all.map((t) => t.id) : tenantIds;
  for (const tenantId of ids) {
    await app.get(AuditService).record({
      tenantId,
      actor: null,
      entityType: 'tenant_key',
      entityId: null,
      operation,
      message,
    });
  }
}
