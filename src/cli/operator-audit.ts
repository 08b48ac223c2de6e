import type { INestApplicationContext } from '@nestjs/common';
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
  await app.get(AuditService).recordOperatorAction(tenantIds, operation, message);
}
