import { Inject, Injectable } from '@nestjs/common';
import { Principal } from '../access/principal';
import { ApplicationLookups } from '../applications/application-lookups.service';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Database } from '../database/database.service';
import { MemberDto } from './dto/member.dto';
import {
  SecurityContactDto,
  SecurityContactResponseDto,
  TenantDto,
  TenantUsageReportDto,
  TokenTypeUsageDto,
  UpdateTenantDto,
} from './dto/tenant.dto';
import { canonicalEmail, emailRefusal } from './email';
import { MembersRepository } from './members.repository';
import { toMemberDto } from './members.service';
import { Tenant } from './tenant.entity';
import { TenantsRepository } from './tenants.repository';

const MAX_SETTINGS = 50;
const DAY_MS = 86_400_000;

/** The caller's own tenant: read, rename, settings, security contact, usage, owner, and soft deletion. */
@Injectable()
export class TenantSelfService {
  constructor(
    private readonly db: Database,
    private readonly tenants: TenantsRepository,
    private readonly members: MembersRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly applications: ApplicationLookups,
    private readonly clock: Clock,
  ) {}

  async get(principal: Principal): Promise<TenantDto> {
    return toTenantDto(await this.find(principal.tenantId));
  }

  async update(principal: Principal, dto: UpdateTenantDto): Promise<TenantDto> {
    await this.find(principal.tenantId);
    const settings = dto.settings === undefined ? undefined : checkSettings(dto.settings);
    await this.tenants.update(principal.tenantId, {
      name: dto.name,
      ...(settings !== undefined ? { settings } : {}),
      modifiedBy: principal.applicationId,
      modifiedAt: this.clock.now(),
    });
    return this.get(principal);
  }

  /**
   * Soft delete, by the owner's key only (the management application the tenant was created with): every key
   * of the tenant stops at once on every replica; the purge job removes the tenant and all its data once
   * the grace period (TENANT_DELETION_GRACE_DAYS) has passed.
   */
  async delete(principal: Principal): Promise<void> {
    await this.find(principal.tenantId);
    if (!(await this.applications.isOwnerApplication(principal.tenantId, principal.applicationId))) {
      throw ApiError.forbidden(
        "Only the tenant owner's key (the one the tenant was created with) can delete it.",
      );
    }
    await this.db.transaction(async () => {
      await this.tenants.markDeleted(principal.tenantId, this.clock.now());
      await this.applications.revokeTenant(principal.tenantId);
    });
  }

  /** Removes the tenants deleted longer ago than the grace period, with everything they hold. */
  async purgeDeleted(now: Date): Promise<number> {
    const before = new Date(now.getTime() - this.config.tenantDeletionGraceDays * DAY_MS);
    return this.tenants.purgeDeletedBefore(before);
  }

  async securityContact(principal: Principal): Promise<SecurityContactResponseDto> {
    return { email: (await this.find(principal.tenantId)).securityContactEmail };
  }

  async updateSecurityContact(
    principal: Principal,
    dto: SecurityContactDto,
  ): Promise<SecurityContactResponseDto> {
    await this.find(principal.tenantId);
    const email = canonicalEmail(dto.email);
    const refusal = emailRefusal(email);
    if (refusal !== null) {
      throw ApiError.field('email', refusal);
    }
    await this.tenants.update(principal.tenantId, {
      securityContactEmail: email,
      modifiedBy: principal.applicationId,
      modifiedAt: this.clock.now(),
    });
    return { email };
  }

  async owner(principal: Principal): Promise<MemberDto> {
    const owner = await this.members.findOwner(principal.tenantId);
    if (owner === null) {
      throw ApiError.notFound('Owner');
    }
    return toMemberDto(owner);
  }

  /**
   * Live tokens by type, and those created or changed since the start of the month (UTC). With no plan, every
   * active token is included: `included_monthly_active_tokens` equals `monthly_active_tokens`.
   */
  async usage(principal: Principal): Promise<TenantUsageReportDto> {
    const now = this.clock.now();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const rows = await this.tenants.tokenUsage(principal.tenantId, now, monthStart);
    const byType: Record<string, TokenTypeUsageDto> = {};
    for (const row of rows) {
      byType[row.type] = {
        count: row.count,
        last_created_at: row.last_created_at === null ? null : new Date(row.last_created_at).toISOString(),
      };
    }
    const total = rows.reduce((sum, r) => sum + r.count, 0);
    const active = rows.reduce((sum, r) => sum + r.active, 0);
    return {
      total_tokens: total,
      token_report: {
        metrics_by_type: byType,
        total_tokens: total,
        monthly_active_tokens: active,
        included_monthly_active_tokens: active,
      },
    };
  }

  private async find(tenantId: string): Promise<Tenant> {
    const tenant = await this.tenants.findLive(tenantId);
    if (tenant === null) {
      throw ApiError.notFound('Tenant');
    }
    return tenant;
  }
}

function checkSettings(settings: Record<string, unknown>): Record<string, string> {
  const entries = Object.entries(settings);
  if (
    entries.length > MAX_SETTINGS ||
    entries.some(([k, v]) => typeof v !== 'string' || v.length > 1000 || k.length > 100)
  ) {
    throw ApiError.field(
      'settings',
      `must map at most ${MAX_SETTINGS} keys to strings of at most 1000 characters`,
    );
  }
  const checked: Record<string, string> = {};
  for (const [key, value] of entries as [string, string][]) {
    Object.defineProperty(checked, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return checked;
}

function toTenantDto(t: Tenant): TenantDto {
  return {
    id: t.id,
    owner_id: t.ownerId,
    name: t.name,
    settings: t.settings,
    created_by: null,
    created_at: t.createdAt.toISOString(),
    modified_by: t.modifiedBy,
    modified_at: t.modifiedAt?.toISOString() ?? null,
  };
}
