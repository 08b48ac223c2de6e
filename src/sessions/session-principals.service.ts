import { Injectable } from '@nestjs/common';
import { ungrantable } from '../access/grants';
import { isPermission, Permission } from '../access/permissions';
import type { Principal } from '../access/principal';
import { ApplicationPrincipals } from '../applications/application-principals.service';
import { Clock } from '../common/clock';
import { SessionRow, SessionsRepository } from './sessions.repository';

/**
 * Session keys start with this; application keys ('key_' and base58) never hold a second underscore, so
 * the authenticator tells them apart by the prefix alone.
 */
export const SESSION_KEY_PREFIX = 'key_sess_';

/**
 * Session keys as principals. A session acts for the public application that created it; until it is
 * authorized it holds nothing, and once authorized it holds what the authorizing application granted, as
 * long as that application still holds it all itself (else nothing). Looked up on every use (not cached):
 * a session lives minutes, and its authorization must show on its next request.
 */
@Injectable()
export class SessionPrincipals {
  constructor(
    private readonly sessions: SessionsRepository,
    private readonly applications: ApplicationPrincipals,
    private readonly clock: Clock,
  ) {}

  /** The session of a key's hashSecret(); null when unknown, expired or its application is gone. */
  async authenticateHash(keyHash: string): Promise<Principal | null> {
    const row = await this.sessions.findLiveByKeyHash(keyHash, this.clock.now());
    if (row === null) {
      return null;
    }
    const owner = await this.applications.principalFor(row.tenant_id, row.application_id);
    if (owner === null) {
      return null;
    }
    const session: Principal = {
      tenantId: row.tenant_id,
      applicationId: row.application_id,
      applicationType: owner.applicationType,
      permissions: new Set<Permission>(),
      rules: [],
      session: { id: row.id, authorizedBy: row.authorized_by },
    };
    return row.authorized_by === null ? session : this.withGrants(session, row, row.authorized_by);
  }

  private async withGrants(session: Principal, row: SessionRow, authorizedBy: string): Promise<Principal> {
    const authorizer = await this.applications.principalFor(row.tenant_id, authorizedBy);
    const grants = { type: 'private' as const, permissions: row.permissions ?? [], rules: row.rules ?? [] };
    if (authorizer === null || ungrantable(authorizer, grants).length > 0) {
      return session;
    }
    const permissions = new Set<Permission>(grants.permissions.filter(isPermission));
    for (const rule of grants.rules) {
      rule.permissions.filter(isPermission).forEach((p) => permissions.add(p));
    }
    return { ...session, permissions, rules: grants.rules };
  }
}
