import { Injectable } from '@nestjs/common';
import { In, IsNull } from 'typeorm';
import { ApplicationType } from '../access/application-type';
import { Database } from '../database/database.service';
import { ApplicationKey } from './application-key.entity';
import { Application } from './application.entity';

/** What a list of applications may be narrowed to. */
export interface ApplicationFilter {
  ids?: string[];
  types?: ApplicationType[];
}

/** What an update may change of an application. */
export type ApplicationChanges = Partial<
  Pick<Application, 'name' | 'permissions' | 'rules' | 'modifiedBy' | 'modifiedAt'>
>;

/** The applications table; every statement runs in the open transaction, if any. */
@Injectable()
export class ApplicationsRepository {
  constructor(private readonly db: Database) {}

  private get applications() {
    return this.db.repository(Application);
  }

  /**
   * The application a key belongs to, or null when no key has this hash or its tenant was deleted: the
   * authentication of every request the application cache does not answer.
   */
  findByKeyHash(keyHash: string): Promise<Application | null> {
    return this.applications
      .createQueryBuilder('a')
      .innerJoin(ApplicationKey, 'k', 'k.tenant_id = a.tenant_id AND k.application_id = a.id')
      .innerJoin('tenants', 't', 't.id = a.tenant_id AND t.deleted_at IS NULL')
      .where('k.key_hash = :keyHash', { keyHash })
      .getOne();
  }

  find(tenantId: string, id: string): Promise<Application | null> {
    return this.applications.findOne({ where: { tenantId, id } });
  }

  findMany(tenantId: string, ids: string[]): Promise<Application[]> {
    return this.applications.find({ where: { tenantId, id: In(ids) } });
  }

  /** A page of the tenant's applications, newest first, and how many match in all. */
  findPage(
    tenantId: string,
    filter: ApplicationFilter,
    offset: number,
    size: number,
  ): Promise<[Application[], number]> {
    return this.applications.findAndCount({
      where: {
        tenantId,
        ...(filter.ids !== undefined ? { id: In(filter.ids) } : {}),
        ...(filter.types !== undefined ? { type: In(filter.types) } : {}),
      },
      order: { createdAt: 'DESC', id: 'ASC' },
      skip: offset,
      take: size,
    });
  }

  /** The oldest management application the vault itself made for the tenant (the owner's). */
  findOwner(tenantId: string): Promise<Application | null> {
    return this.applications.findOne({
      where: { tenantId, type: 'management', createdBy: IsNull() },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  async listIds(tenantId: string): Promise<string[]> {
    const apps = await this.applications.find({ where: { tenantId }, select: { id: true } });
    return apps.map((app) => app.id);
  }

  /** Inserts the application and answers it as stored (with its creation time). */
  async insert(application: Omit<Application, 'createdAt'>): Promise<Application> {
    await this.applications.insert(application);
    return this.applications.findOneByOrFail({ tenantId: application.tenantId, id: application.id });
  }

  async update(tenantId: string, id: string, changes: ApplicationChanges): Promise<void> {
    await this.applications.update({ tenantId, id }, changes);
  }

  /** Deletes the application (its keys go with it); the number deleted. */
  async delete(tenantId: string, id: string): Promise<number> {
    return (await this.applications.delete({ tenantId, id })).affected ?? 0;
  }
}
