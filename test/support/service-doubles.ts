import { randomUUID } from 'node:crypto';
import { Principal } from '../../src/access/principal';
import { ApplicationLookups } from '../../src/applications/application-lookups.service';
import { AuditService } from '../../src/audit/audit.service';
import { AuditEvent } from '../../src/audit/audit-event';
import { ApiError } from '../../src/common/api-error';

/** A management application of `tenantId`, as a request's principal, for service tests. */
export function testPrincipal(tenantId: string): Principal {
  return {
    tenantId,
    applicationId: randomUUID(),
    applicationType: 'management',
    permissions: new Set(),
    rules: [],
  };
}

/** ApplicationLookups that lets any application (or none) be bound: for subjects that are not about binding. */
export const bindAnyApplication = {
  requireBindable: (_: Principal, id: string | null) => Promise.resolve(id),
} as ApplicationLookups;

/**
 * The audit trail as a stand-in that keeps what it was asked to record and, told to, fails as the real one
 * does when its record cannot be written (503): the subject's change must then not happen either.
 */
export class AuditDouble {
  fail = false;
  readonly recorded: string[] = [];

  get service(): AuditService {
    return this as unknown as AuditService;
  }

  record(event: AuditEvent): Promise<void> {
    if (this.fail) {
      return Promise.reject(new ApiError(503, 'The audit record could not be written.'));
    }
    this.recorded.push(`${event.entityType}:${event.operation}`);
    return Promise.resolve();
  }

  /** Runs `work` with every record failing. */
  async failing(work: () => Promise<void>): Promise<void> {
    this.fail = true;
    try {
      await work();
    } finally {
      this.fail = false;
    }
  }
}
