import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Page, pageOf, pageOffset } from '../common/pagination';
import { ListMembersQueryDto, MAX_MEMBER_PAGE_SIZE, MemberDto, UpdateMemberDto } from './dto/member.dto';
import { Clock } from '../common/clock';
import { TenantMember } from './tenant-member.entity';
import { User } from './user.entity';
import { Transactions } from '../database/transactions';
import { Events } from '../events/events';

@Injectable()
export class MembersService {
  constructor(
    @InjectRepository(TenantMember) private readonly members: Repository<TenantMember>,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly events: Events,
    private readonly clock: Clock,
  ) {}

  async list(principal: Principal, query: ListMembersQueryDto): Promise<Page<MemberDto>> {
    if (query.size > MAX_MEMBER_PAGE_SIZE) {
      throw ApiError.field('size', `size must not be greater than ${MAX_MEMBER_PAGE_SIZE}`);
    }
    const [rows, total] = await this.members.findAndCount({
      where: {
        tenantId: principal.tenantId,
        ...(query.user_id !== undefined ? { userId: In(query.user_id) } : {}),
      },
      relations: { user: true },
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: pageOffset(query),
      take: query.size,
    });
    return pageOf(rows.map(toMemberDto), total, query);
  }

  /** A new role for a member; the OWNER's role is not changed here (422), nor is anyone made OWNER. */
  async update(principal: Principal, id: string, dto: UpdateMemberDto): Promise<MemberDto> {
    const member = await this.members.findOne({ where: { tenantId: principal.tenantId, id } });
    if (member === null) {
      throw ApiError.notFound('Member');
    }
    if (member.role === 'OWNER') {
      throw ApiError.unprocessable("The tenant owner's role cannot be changed.");
    }
    await this.transactions.run(async () => {
      await this.transactions.manager.update(
        TenantMember,
        { tenantId: principal.tenantId, id },
        { role: dto.role, modifiedBy: principal.applicationId, modifiedAt: this.clock.now() },
      );
      await this.audit.record(
        auditEvent(principal, 'tenant_member', id, 'update', `Member role set to ${dto.role}`),
      );
      await this.events.publish(principal.tenantId, 'tenant.member.updated', { id });
    });
    const updated = await this.members.findOneOrFail({
      where: { tenantId: principal.tenantId, id },
      relations: { user: true },
    });
    return toMemberDto(updated);
  }

  /**
   * Removes the member from the tenant. The vault's API is reached with application keys, not as a user,
   * so membership is the member's whole access: once the row is gone they are no longer part of the
   * tenant, and any invitation sent to them earlier can be sent anew. The OWNER cannot be removed (422).
   */
  async delete(principal: Principal, id: string): Promise<void> {
    const member = await this.members.findOne({ where: { tenantId: principal.tenantId, id } });
    if (member === null) {
      throw ApiError.notFound('Member');
    }
    if (member.role === 'OWNER') {
      throw ApiError.unprocessable('The tenant owner cannot be removed.');
    }
    await this.transactions.run(async () => {
      await this.transactions.manager.delete(TenantMember, { tenantId: principal.tenantId, id });
      await this.audit.record(auditEvent(principal, 'tenant_member', id, 'delete', 'Member removed'));
      await this.events.publish(principal.tenantId, 'tenant.member.deleted', { id });
    });
  }

  /**
   * The user with this e-mail (created when new, names filled when missing) made an ADMIN of the tenant.
   * `email` is canonical (canonicalEmail); the user is found by that exact address, byte for byte. Joins
   * the caller's transaction (database/transactions.ts): accepting an invitation is all or nothing.
   */
  async addMember(
    tenantId: string,
    person: { email: string; firstName: string; lastName: string },
    createdBy: string | null,
  ): Promise<TenantMember> {
    const manager = this.transactions.manager;
    let user = await manager.findOne(User, { where: { email: person.email } });
    if (user === null) {
      user = manager.create(User, {
        id: randomUUID(),
        email: person.email,
        firstName: person.firstName,
        lastName: person.lastName,
        picture: null,
      });
      await manager.insert(User, user);
    } else if (user.firstName === null && user.lastName === null) {
      await manager.update(User, { id: user.id }, { firstName: person.firstName, lastName: person.lastName });
    }
    const member = {
      tenantId,
      id: randomUUID(),
      userId: user.id,
      role: 'ADMIN' as const,
      createdBy,
      modifiedBy: null,
      modifiedAt: null,
    };
    await manager.insert(TenantMember, member);
    await this.events.publish(tenantId, 'tenant.member.created', { id: member.id }, manager);
    return manager.findOneOrFail(TenantMember, {
      where: { tenantId, id: member.id },
      relations: { user: true },
    });
  }

  /** True when someone with this exact (canonical) e-mail is already a member of the tenant. */
  async isMember(tenantId: string, email: string): Promise<boolean> {
    const manager = this.transactions.manager;
    const rows: unknown[] = await manager.query(
      'SELECT 1 FROM tenant_members m JOIN users u ON u.id = m.user_id WHERE m.tenant_id = $1 AND u.email = $2',
      [tenantId, email],
    );
    return rows.length > 0;
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
