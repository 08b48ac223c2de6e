import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Application } from '../applications/application.entity';
import { ApplicationsService } from '../applications/applications.service';
import { permissionsFor } from '../access/permissions';
import { ApiError } from '../common/api-error';
import { DELEGATE_EVERYTHING } from '../access/grants';
import { KeyRotation } from '../crypto/key-rotation.service';
import { MasterKeyring } from '../crypto/master-keyring.service';
import { canonicalEmail, emailRefusal } from './email';
import { TenantMember } from './tenant-member.entity';
import { Tenant } from './tenant.entity';
import { User } from './user.entity';
import { Transactions } from '../database/transactions';

export interface CreatedTenant {
  tenant: Tenant;
  application: Application;
  /** The management key, shown once. */
  key: string;
}

@Injectable()
export class TenantsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly applications: ApplicationsService,
    private readonly master: MasterKeyring,
    private readonly rotation: KeyRotation,
  ) {}

  /** Tenant, its OWNER member, its keys and a management application: all or nothing. */
  async createTenant(name: string, ownerEmail: string, key?: string): Promise<CreatedTenant> {
    return this.transactions.run(() => this.createIn(name, ownerEmail, key));
  }

  /**
   * First start on an empty database: creates the default tenant. The advisory lock makes replicas that
   * boot together create it once. Returns null when a tenant already exists.
   */
  async bootstrap(key?: string): Promise<CreatedTenant | null> {
    await this.unsealedIfEmpty();
    return this.transactions.run(async () => {
      const manager = this.transactions.manager;
      await manager.query("SELECT pg_advisory_xact_lock(hashtext('token-vault:bootstrap'))");
      if ((await manager.count(Tenant)) > 0) {
        return null;
      }
      return this.createIn('Default', 'owner@token-vault.local', key);
    });
  }

  /** Sealed on a new database: the default tenant's keys need the master keys, so setup waits for the unseal. */
  private async unsealedIfEmpty(): Promise<void> {
    if (!this.master.sealed || (await this.transactions.manager.count(Tenant)) > 0) {
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

  /** Inside the caller's transaction: every module writes through it (database/transactions.ts). */
  private async createIn(name: string, ownerEmail: string, key?: string): Promise<CreatedTenant> {
    const manager = this.transactions.manager;
    const email = canonicalEmail(ownerEmail);
    const refusal = emailRefusal(email);
    if (refusal !== null) {
      throw ApiError.field('email', refusal);
    }
    let user = await manager.findOne(User, { where: { email } });
    if (user === null) {
      user = manager.create(User, {
        id: randomUUID(),
        email,
        firstName: null,
        lastName: null,
        picture: null,
      });
      await manager.insert(User, user);
    }
    const tenant = manager.create(Tenant, { id: randomUUID(), name, ownerId: user.id });
    await manager.insert(Tenant, tenant);
    await manager.insert(TenantMember, {
      tenantId: tenant.id,
      id: randomUUID(),
      userId: user.id,
      role: 'OWNER',
      createdBy: null,
      modifiedBy: null,
      modifiedAt: null,
    });
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
