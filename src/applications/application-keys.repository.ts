import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Database } from '../database/database.service';
import { ApplicationKey } from './application-key.entity';

/** The keys table: issuing (with the next version), listing, finding and revoking. */
@Injectable()
export class ApplicationKeysRepository {
  constructor(private readonly db: Database) {}

  private get keys() {
    return this.db.repository(ApplicationKey);
  }

  /** Stores a key (by its hash) for the application under its next key version; the stored row. */
  async issue(
    tenantId: string,
    applicationId: string,
    keyHash: string,
    createdBy: string | null,
  ): Promise<ApplicationKey> {
    const [bumped] = await this.db.query<{ key_version: number }>(
      `UPDATE applications SET key_version = key_version + 1 WHERE tenant_id = $1 AND id = $2
       RETURNING key_version`,
      [tenantId, applicationId],
    );
    if (bumped === undefined) {
      throw new Error('application vanished while issuing a key');
    }
    const id = randomUUID();
    await this.keys.insert({
      tenantId,
      id,
      applicationId,
      version: bumped.key_version,
      keyHash,
      createdBy,
    });
    return this.keys.findOneByOrFail({ tenantId, id });
  }

  list(tenantId: string, applicationId: string): Promise<ApplicationKey[]> {
    return this.keys.find({ where: { tenantId, applicationId }, order: { version: 'ASC' } });
  }

  find(tenantId: string, applicationId: string, id: string): Promise<ApplicationKey | null> {
    return this.keys.findOne({ where: { tenantId, applicationId, id } });
  }

  /** Deletes one key (or all of the application's when `id` is absent); the number deleted. */
  async revoke(tenantId: string, applicationId: string, id?: string): Promise<number> {
    const result = await this.keys.delete({
      tenantId,
      applicationId,
      ...(id !== undefined ? { id } : {}),
    });
    return result.affected ?? 0;
  }
}
