import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { generateApiKey, hashSecret } from '../crypto';
import { ApplicationKey } from './application-key.entity';
import { Application } from './application.entity';

/** The keys table: issuing (with the next version), finding by hash, listing and revoking. */
@Injectable()
export class ApplicationKeyStore {
  /** Issues a key for the application inside `manager`'s transaction; the plaintext is returned once. */
  async issue(
    manager: EntityManager,
    app: { tenantId: string; id: string },
    createdBy: string | null,
    chosen?: string,
  ): Promise<{ row: ApplicationKey; key: string }> {
    const rows: { key_version: number }[][] | { key_version: number }[] = await manager.query(
      `UPDATE applications SET key_version = key_version + 1 WHERE tenant_id = $1 AND id = $2
       RETURNING key_version`,
      [app.tenantId, app.id],
    );
    const version = returned(rows);
    const key = chosen ?? generateApiKey();
    const row = manager.create(ApplicationKey, {
      tenantId: app.tenantId,
      id: randomUUID(),
      applicationId: app.id,
      version,
      keyHash: hashSecret(key),
      createdBy,
    });
    await manager.insert(ApplicationKey, row);
    return {
      row: await manager.findOneByOrFail(ApplicationKey, { tenantId: app.tenantId, id: row.id }),
      key,
    };
  }

  /** The application a key belongs to, or null when no key has this hash or its tenant was deleted. */
  applicationOf(manager: EntityManager, keyHash: string): Promise<Application | null> {
    return manager
      .createQueryBuilder(Application, 'a')
      .innerJoin(ApplicationKey, 'k', 'k.tenant_id = a.tenant_id AND k.application_id = a.id')
      .innerJoin('tenants', 't', 't.id = a.tenant_id AND t.deleted_at IS NULL')
      .where('k.key_hash = :keyHash', { keyHash })
      .getOne();
  }

  list(manager: EntityManager, tenantId: string, applicationId: string): Promise<ApplicationKey[]> {
    return manager.find(ApplicationKey, {
      where: { tenantId, applicationId },
      order: { version: 'ASC' },
    });
  }

  find(
    manager: EntityManager,
    tenantId: string,
    applicationId: string,
    id: string,
  ): Promise<ApplicationKey | null> {
    return manager.findOne(ApplicationKey, { where: { tenantId, applicationId, id } });
  }

  /** Deletes one key (or all of the application's when `id` is absent); the number deleted. */
  async revoke(
    manager: EntityManager,
    tenantId: string,
    applicationId: string,
    id?: string,
  ): Promise<number> {
    const result = await manager.delete(ApplicationKey, {
      tenantId,
      applicationId,
      ...(id !== undefined ? { id } : {}),
    });
    return result.affected ?? 0;
  }
}

/** UPDATE ... RETURNING answers `[rows, count]` through TypeORM's postgres driver. */
function returned(result: { key_version: number }[][] | { key_version: number }[]): number {
  const rows = Array.isArray(result[0]) ? result[0] : (result as { key_version: number }[]);
  const first = rows[0] as { key_version: number } | undefined;
  if (first === undefined) {
    throw new Error('application vanished while issuing a key');
  }
  return first.key_version;
}
