import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Application } from '../applications/application.entity';
import { ApplicationsService } from '../applications/applications.service';
import { permissionsFor } from '../access/permissions';
import { ApiError } from '../common/api-error';
import { DELEGATE_EVERYTHING } from '../access/grants';
import { KeyRotation } from '../crypto/key-rotation.service';
import { MasterKeyring } from '../crypto/master-keyring.service';
import { Database } from '../database/database.service';
import { canonicalEmail, emailRefusal } from './email';
import { MembersRepository } from './members.repository';
import { Tenant } from './tenant.entity';
import { TenantsRepository } from './tenants.repository';

export interface CreatedTenant {
  tenant: Tenant;
  application: Application;
  /** The management key, shown once. */
  key: string;
}

@Injectable()
export class TenantsService {
  constructor(
    private readonly db: Database,
    private readonly tenants: TenantsRepository,
    private readonly members: MembersRepository,
    private readonly applications: ApplicationsService,
    private readonly master: MasterKeyring,
    private readonly rotation: KeyRotation,
  ) {}

  /** Tenant, its OWNER member, its keys and a management application: all or nothing. */
  async createTenant(name: string, ownerEmail: string, key?: string): Promise<CreatedTenant> {
    return this.db.transaction(() => this.createIn(name, ownerEmail, key));
  }

  /**
   * First start on an empty database: creates the default tenant. The advisory lock makes replicas that
   * boot together create it once. Returns null when a tenant already exists.
   */
  async bootstrap(key?: string): Promise<CreatedTenant | null> {
    await this.unsealedIfEmpty();
    return this.db.transaction(async () => {
      await this.tenants.lockBootstrap();
      if (await this.tenants.anyExists()) {
        return null;
      }
      return this.createIn('Default', 'owner@token-vault.local', key);
    });
  }

  /** Sealed on a new database: the default tenant's keys need the master keys, so setup waits for the unseal. */
  private async unsealedIfEmpty(): Promise<void> {
    if (!this.master.sealed || (await this.tenants.anyExists())) {
      return;
    }
    new Logger('Setup').log(
      'Sealed on a new database: the default tenant and its management key are created once the key holders unseal the vault (`npm run cli -- unseal`).',
    );
    // Polled: unsealing happens once, by the key holders, and takes them far longer than this.
    while (this.master.sealed) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** The tenant's name, deleted or not. */
  nameOf(tenantId: string): Promise<string> {
    return this.tenants.nameOf(tenantId);
  }

  /** Inside the caller's transaction, which every module's repository joins (Database.transaction). */
  private async createIn(name: string, ownerEmail: string, key?: string): Promise<CreatedTenant> {
    const email = canonicalEmail(ownerEmail);
    const refusal = emailRefusal(email);
    if (refusal !== null) {
      throw ApiError.field('email', refusal);
    }
    const user =
      (await this.members.findUserByEmail(email)) ??
      (await this.members.insertUser(email, { firstName: null, lastName: null }));
    const tenant = await this.tenants.insert(randomUUID(), name, user.id);
    await this.members.insert(tenant.id, { userId: user.id, role: 'OWNER', createdBy: null });
    await this.rotation.createTenantKeys(tenant.id);
    const { application, key: issued } = await this.applications.insert(
      tenant.id,
      {
        name: 'Management',
        type: 'management',
        permissions: permissionsFor('management'),
        rules: [DELEGATE_EVERYTHING],
        key,
      },
      null,
    );
    return { tenant, application, key: issued ?? '' };
  }
}
