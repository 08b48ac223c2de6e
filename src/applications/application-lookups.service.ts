import { Injectable } from '@nestjs/common';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { ApplicationCache } from './application-cache';
import { Application } from './application.entity';
import { requireGrantable } from './application-grants';
import { ApplicationsRepository } from './applications.repository';

/** What other modules ask of a tenant's applications: finding them, binding one, the owner's, revoking all. */
@Injectable()
export class ApplicationLookups {
  constructor(
    private readonly applications: ApplicationsRepository,
    private readonly cache: ApplicationCache,
  ) {}

  /** An application of the tenant, or null; reactors and proxies then check the type they accept. */
  async findForTenant(tenantId: string, id: string): Promise<Application | null> {
    return this.applications.find(tenantId, id);
  }

  async findManyForTenant(tenantId: string, ids: string[]): Promise<Application[]> {
    return this.applications.findMany(tenantId, ids);
  }

  /**
   * The application a reactor or proxy of the caller will act as (null for none): a public or private
   * application of the tenant holding nothing the caller does not hold itself, since binding it hands its
   * permissions to code the caller writes.
   */
  async requireBindable(principal: Principal, applicationId: string | null): Promise<string | null> {
    if (applicationId === null) {
      return null;
    }
    const application = await this.findForTenant(principal.tenantId, applicationId);
    if (application === null) {
      throw ApiError.field('application.id', 'is not an application of this tenant');
    }
    if (application.type !== 'public' && application.type !== 'private') {
      throw ApiError.field('application.id', 'must be a public or private application');
    }
    requireGrantable(principal, application, 'bind');
    return application.id;
  }

  /** The management application the tenant was created with (the owner's key): the oldest one the vault made. */
  async isOwnerApplication(tenantId: string, applicationId: string): Promise<boolean> {
    const first = await this.applications.findOwner(tenantId);
    return first?.id === applicationId;
  }

  /** Inside the transaction that deletes a tenant: its applications leave every replica's cache on commit. */
  async revokeTenant(tenantId: string): Promise<void> {
    for (const id of await this.applications.listIds(tenantId)) {
      await this.cache.changed(id);
    }
  }
}
