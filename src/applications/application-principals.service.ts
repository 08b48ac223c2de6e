import { Injectable } from '@nestjs/common';
import { isPermission, Permission } from '../access/permissions';
import { Principal } from '../access/principal';
import { hashSecret } from '../crypto';
import { ApplicationCache } from './application-cache';
import { Application } from './application.entity';
import { ApplicationsRepository } from './applications.repository';

/** Applications as principals, through the cache: by API key on every request, or by id. */
@Injectable()
export class ApplicationPrincipals {
  constructor(
    private readonly applications: ApplicationsRepository,
    private readonly cache: ApplicationCache,
  ) {}

  /** Resolves an API key to its application; null when unknown (or regenerated). */
  authenticate(key: string): Promise<Principal | null> {
    return this.authenticateHash(hashSecret(key));
  }

  /** authenticate() of a key by its hashSecret(), for a caller that hashed it already. */
  async authenticateHash(keyHash: string): Promise<Principal | null> {
    const cached = this.cache.get(keyHash);
    if (cached !== undefined) {
      return cached;
    }
    const app = await this.applications.findByKeyHash(keyHash);
    if (app === null) {
      return null;
    }
    const principal = toPrincipal(app);
    this.cache.set(keyHash, principal);
    return principal;
  }

  /**
   * The stored application as a principal, without its key: how a reactor's or a proxy's application acts.
   * Cached and evicted exactly like `authenticate` (the cache evicts by application id). Null when the
   * application is not the tenant's.
   */
  async principalFor(tenantId: string, applicationId: string): Promise<Principal | null> {
    const cacheKey = `app:${tenantId}:${applicationId}`;
    const cached = this.cache.get(cacheKey);
    if (cached !== undefined) {
      return cached;
    }
    const app = await this.applications.find(tenantId, applicationId);
    if (app === null) {
      return null;
    }
    const principal = toPrincipal(app);
    this.cache.set(cacheKey, principal);
    return principal;
  }
}

function toPrincipal(app: Application): Principal {
  const granted = new Set<Permission>(app.permissions.filter(isPermission));
  // A management application's rules say what it may delegate, never what it may do itself.
  for (const rule of app.type === 'management' ? [] : app.rules) {
    rule.permissions.filter(isPermission).forEach((p) => granted.add(p));
  }
  return {
    tenantId: app.tenantId,
    applicationId: app.id,
    applicationType: app.type,
    permissions: granted,
    rules: app.rules,
  };
}
