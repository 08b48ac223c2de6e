import { Injectable } from '@nestjs/common';
import { Principal } from '../access/principal';
import { auditEvent } from '../audit/audit-event';
import { AuditService } from '../audit/audit.service';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { Page, pageOf, pageOffset } from '../common/pagination';
import { Database } from '../database/database.service';
import { Events } from '../events/events';
import { ListMembersQueryDto, MAX_MEMBER_PAGE_SIZE, MemberDto, UpdateMemberDto } from './dto/member.dto';
import { MembersRepository } from './members.repository';
import { TenantMember } from './tenant-member.entity';

@Injectable()
export class MembersService {
  constructor(
    private readonly members: MembersRepository,
    private readonly db: Database,
    private readonly audit: AuditService,
    private readonly events: Events,
    private readonly clock: Clock,
  ) {}

  async list(principal: Principal, query: ListMembersQueryDto): Promise<Page<MemberDto>> {
    if (query.size > MAX_MEMBER_PAGE_SIZE) {
      throw ApiError.field('size', `size must not be greater than ${MAX_MEMBER_PAGE_SIZE}`);
    }
    const [rows, total] = await this.members.page(principal.tenantId, {
      userIds: query.user_id,
      offset: pageOffset(query),
      size: query.size,
    });
    return pageOf(rows.map(toMemberDto), total, query);
  }

  /** A new role for a member; the OWNER's role is not changed here (422), nor is anyone made OWNER. */
  async update(principal: Principal, id: string, dto: UpdateMemberDto): Promise<MemberDto> {
    const member = await this.members.find(principal.tenantId, id);
    if (member === null) {
      throw ApiError.notFound('Member');
    }
    if (member.role === 'OWNER') {
      throw ApiError.unprocessable("The tenant owner's role cannot be changed.");
    }
    await this.db.transaction(async () => {
      await this.members.setRole(principal.tenantId, id, dto.role, principal.applicationId, this.clock.now());
      await this.audit.record(
        auditEvent(principal, 'tenant_member', id, 'update', `Member role set to ${dto.role}`),
      );
      await this.events.publish(principal.tenantId, 'tenant.member.updated', { id });
    });
    return toMemberDto(await this.members.findWithUser(principal.tenantId, id));
  }

  /**
   * Removes the member from the tenant. The vault's API is reached with application keys, not as a user,
   * so membership is the member's whole access: once the row is gone they are no longer part of the
   * tenant, and any invitation sent to them earlier can be sent anew. The OWNER cannot be removed (422).
   */
  async delete(principal: Principal, id: string): Promise<void> {
    const member = await this.members.find(principal.tenantId, id);
    if (member === null) {
      throw ApiError.notFound('Member');
    }
    if (member.role === 'OWNER') {
      throw ApiError.unprocessable('The tenant owner cannot be removed.');
    }
    await this.db.transaction(async () => {
      await this.members.remove(principal.tenantId, id);
      await this.audit.record(auditEvent(principal, 'tenant_member', id, 'delete', 'Member removed'));
      await this.events.publish(principal.tenantId, 'tenant.member.deleted', { id });
    });
  }

  /**
   * The user with this e-mail (created when new, names filled when missing) made an ADMIN of the tenant.
   * `email` is canonical (canonicalEmail); the user is found by that exact address, byte for byte. Joins
   * the caller's transaction: accepting an invitation is all or nothing.
   */
  async addMember(
    tenantId: string,
    person: { email: string; firstName: string; lastName: string },
    createdBy: string | null,
  ): Promise<TenantMember> {
    const { email, firstName, lastName } = person;
    let user = await this.members.findUserByEmail(email);
    if (user === null) {
      user = await this.members.insertUser(email, { firstName, lastName });
    } else if (user.firstName === null && user.lastName === null) {
      await this.members.nameUser(user.id, firstName, lastName);
    }
    const id = await this.members.insert(tenantId, { userId: user.id, role: 'ADMIN', createdBy });
    await this.events.publish(tenantId, 'tenant.member.created', { id });
    return this.members.findWithUser(tenantId, id);
  }

  /** True when someone with this exact (canonical) e-mail is already a member of the tenant. */
  isMember(tenantId: string, email: string): Promise<boolean> {
    return this.members.hasEmail(tenantId, email);
  }
}

export function toMemberDto(m: TenantMember): MemberDto {
  return {
    id: m.id,
    tenant_id: m.tenantId,
    role: m.role,
    user: {
      id: m.userId,
      email: m.user?.email ?? null,
      first_name: m.user?.firstName ?? null,
      last_name: m.user?.lastName ?? null,
      picture: m.user?.picture ?? null,
    },
    created_by: m.createdBy,
    created_at: m.createdAt.toISOString(),
    created_date: m.createdAt.toISOString(),
    modified_by: m.modifiedBy,
    modified_at: m.modifiedAt?.toISOString() ?? null,
  };
}
