import { AuditService } from '../../audit/audit.service';
import { auditEvent } from '../../audit/audit-event';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes, randomUUID } from 'node:crypto';
import { Brackets, DataSource, EntityManager } from 'typeorm';
import { ApplicationLookups } from '../../applications/application-lookups.service';
import { Principal } from '../../access/principal';
import { ApiError } from '../../common/api-error';
import { Clock } from '../../common/clock';
import { Page, pageOf, pageOffset } from '../../common/pagination';
import { base58Fixed, hashSecret } from '../../crypto';
import { canonicalEmail, emailRefusal, isCanonicalEmail } from '../email';
import { MembersService, toMemberDto } from '../members.service';
import { Tenant } from '../tenant.entity';
import {
  AcceptedInvitationDto,
  InvitationDeliveryDto,
  InvitationDto,
  ListInvitationsQueryDto,
} from './dto/invitation.dto';
import { Invitation, statusAt } from './invitation.entity';
import { InvitationMailSender } from './invitation-mail-sender';
import { InvitationMailThrottle } from './invitation-mail-throttle';
import { InvitationOutbox } from './invitation-outbox';
import { Transactions } from '../../database/transactions';
import { Events } from '../../events/events';

export const INVITATION_LIFETIME_MS = 72 * 60 * 60 * 1000;
const SECRET_BYTES = 32;

/** What the acceptance page shows for a link, or why the link does not work. */
export type InvitationView =
  | { ok: true; tenantName: string; inviter: string; email: string }
  | { ok: false; status: 404 | 410; message: string };

const VOID_LINK = 'This invitation link is not valid: it was used, replaced by a newer one, or withdrawn.';
const EXPIRED_LINK = 'This invitation has expired: ask for a new one.';

@Injectable()
export class InvitationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly applications: ApplicationLookups,
    private readonly outbox: InvitationOutbox,
    private readonly sender: InvitationMailSender,
    private readonly mailThrottle: InvitationMailThrottle,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
    private readonly members: MembersService,
    private readonly audit: AuditService,
    private readonly events: Events,
  ) {}

  /** `given` is stored and mailed in its canonical form (see tenants/email.ts); other forms are 400. */
  async create(principal: Principal, given: string): Promise<InvitationDto> {
    const email = canonicalEmail(given);
    const refusal = emailRefusal(email);
    if (refusal !== null) {
      throw ApiError.field('email', refusal);
    }
    const now = this.clock.now();
    const secret = newSecret();
    const mail = await this.outbox.prepare(principal.tenantId, secret);
    const invitation = await this.transactions.run(async () => {
      const manager = this.transactions.manager;
      if (await this.members.isMember(principal.tenantId, email)) {
        throw ApiError.conflict('This address belongs to a member of the tenant already.');
      }
      const existing = await this.findByEmail(manager, principal.tenantId, email);
      if (existing !== null) {
        if (statusAt(existing, now) === 'PENDING') {
          throw ApiError.conflict('An invitation to this address is pending: resend it instead.');
        }
        await manager.delete(Invitation, { tenantId: principal.tenantId, id: existing.id });
      }
      await this.mailThrottle.take(manager, principal.tenantId, email, now);
      const row = manager.create(Invitation, {
        tenantId: principal.tenantId,
        id: randomUUID(),
        email,
        status: 'PENDING',
        secretHash: hashSecret(secret),
        expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_MS),
        createdBy: principal.applicationId,
        createdAt: now,
        modifiedBy: null,
        modifiedAt: null,
      });
      await manager.insert(Invitation, row);
      await this.outbox.enqueue(manager, row, 'create', mail, now);
      await this.audit.record(
        auditEvent(principal, 'tenant_invitation', row.id, 'create', 'Invitation created'),
      );
      await this.events.publish(principal.tenantId, 'tenant.invitation.created', { id: row.id }, manager);
      return row;
    });
    await this.sender.sendSoon(mail.id);
    return this.get(principal, invitation.id);
  }

  /**
   * Back to PENDING with a new link and 72 hours; every earlier link stops working. A throttled resend
   * (429) changes nothing: the current link keeps working.
   */
  async resend(principal: Principal, id: string): Promise<InvitationDto> {
    const now = this.clock.now();
    const secret = newSecret();
    const mail = await this.outbox.prepare(principal.tenantId, secret);
    await this.dataSource.transaction(async (manager) => {
      const found = await this.find(principal.tenantId, id, manager);
      await this.mailThrottle.take(manager, principal.tenantId, found.email, now);
      Object.assign(found, {
        status: 'PENDING',
        secretHash: hashSecret(secret),
        expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_MS),
        modifiedBy: principal.applicationId,
        modifiedAt: now,
      });
      await manager.update(
        Invitation,
        { tenantId: principal.tenantId, id },
        {
          status: found.status,
          secretHash: found.secretHash,
          expiresAt: found.expiresAt,
          modifiedBy: found.modifiedBy,
          modifiedAt: found.modifiedAt,
        },
      );
      await this.outbox.enqueue(manager, found, 'resend', mail, now);
      await this.audit.record(
        auditEvent(principal, 'tenant_invitation', id, 'resend', 'Invitation resent'),
        manager,
      );
      await this.events.publish(principal.tenantId, 'tenant.invitation.resent', { id }, manager);
    });
    await this.sender.sendSoon(mail.id);
    return this.get(principal, id);
  }

  async list(principal: Principal, query: ListInvitationsQueryDto): Promise<Page<InvitationDto>> {
    const now = this.clock.now();
    const builder = this.dataSource.manager
      .createQueryBuilder(Invitation, 'i')
      .where('i.tenant_id = :tenantId', { tenantId: principal.tenantId });
    if (query.status === 'PENDING') {
      builder.andWhere("i.status = 'PENDING' AND i.expires_at > :now", { now });
    } else if (query.status === 'EXPIRED') {
      builder.andWhere(
        new Brackets((q) => q.where("i.status = 'EXPIRED'").orWhere('i.expires_at <= :now', { now })),
      );
    }
    const [rows, total] = await builder
      .orderBy('i.created_at', 'DESC')
      .addOrderBy('i.id', 'ASC')
      .skip(pageOffset(query))
      .take(query.size)
      .getManyAndCount();
    const deliveries = await this.outbox.deliveries(
      principal.tenantId,
      rows.map((r) => r.id),
    );
    return pageOf(
      rows.map((r) => toInvitationDto(r, now, deliveries.get(r.id) ?? null)),
      total,
      query,
    );
  }

  async get(principal: Principal, id: string): Promise<InvitationDto> {
    const invitation = await this.find(principal.tenantId, id);
    const deliveries = await this.outbox.deliveries(principal.tenantId, [id]);
    return toInvitationDto(invitation, this.clock.now(), deliveries.get(id) ?? null);
  }

  /** Deleted: its links stop working at once. */
  async delete(principal: Principal, id: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const result = await manager.delete(Invitation, { tenantId: principal.tenantId, id });
      if ((result.affected ?? 0) === 0) {
        throw ApiError.notFound('Invitation');
      }
      await this.audit.record(
        auditEvent(principal, 'tenant_invitation', id, 'delete', 'Invitation deleted'),
        manager,
      );
      await this.events.publish(principal.tenantId, 'tenant.invitation.deleted', { id }, manager);
    });
  }

  /** For the acceptance page: whose invitation a link is, or why it does not work. */
  async view(secret: string): Promise<InvitationView> {
    const invitation = await this.dataSource.manager.findOne(Invitation, {
      where: { secretHash: hashSecret(secret) },
    });
    if (invitation === null) {
      return { ok: false, status: 404, message: VOID_LINK };
    }
    if (statusAt(invitation, this.clock.now()) === 'EXPIRED') {
      return { ok: false, status: 410, message: EXPIRED_LINK };
    }
    const tenant = await this.dataSource.manager.findOneByOrFail(Tenant, { id: invitation.tenantId });
    return {
      ok: true,
      tenantName: tenant.name,
      inviter: await this.inviterOf(invitation),
      email: invitation.email,
    };
  }

  /** Creates (or reuses) the user, makes them an ADMIN member and consumes the invitation, all at once. */
  async accept(secret: string, firstName: string, lastName: string): Promise<AcceptedInvitationDto> {
    const now = this.clock.now();
    const member = await this.transactions.run(async () => {
      const manager = this.transactions.manager;
      const invitation = await manager
        .createQueryBuilder(Invitation, 'i')
        .setLock('pessimistic_write')
        .where('i.secret_hash = :hash', { hash: hashSecret(secret) })
        .getOne();
      // A stored address not in canonical form (written before canonicalisation) was mailed to a mailbox
      // that is not the user's it would fold to: it never attaches to anyone.
      if (invitation === null || !isCanonicalEmail(invitation.email)) {
        throw ApiError.notFound('Invitation');
      }
      if (statusAt(invitation, now) === 'EXPIRED') {
        throw new ApiError(410, EXPIRED_LINK);
      }
      await manager.delete(Invitation, { tenantId: invitation.tenantId, id: invitation.id });
      if (await this.members.isMember(invitation.tenantId, invitation.email)) {
        throw ApiError.conflict('This address belongs to a member of the tenant already.');
      }
      const added = await this.members.addMember(
        invitation.tenantId,
        { email: invitation.email, firstName, lastName },
        invitation.createdBy,
      );
      await this.events.publish(invitation.tenantId, 'tenant.invitation.accepted', { id: invitation.id });
      await this.audit.record({
        tenantId: invitation.tenantId,
        actor: { userId: added.userId },
        entityType: 'tenant_member',
        entityId: added.id,
        operation: 'create',
        message: `Member joined by accepting invitation ${invitation.id}`,
      });
      return added;
    });
    return { member: toMemberDto(member) };
  }

  /** PENDING invitations past expires_at become EXPIRED; one statement, so replicas cannot collide. */
  async expireDue(now: Date): Promise<number> {
    const result = await this.dataSource.manager
      .createQueryBuilder()
      .update(Invitation)
      .set({ status: 'EXPIRED', modifiedAt: now })
      .where("status = 'PENDING' AND expires_at <= :now", { now })
      .execute();
    return result.affected ?? 0;
  }

  async tenantNameOf(tenantId: string): Promise<string> {
    return (await this.dataSource.manager.findOneByOrFail(Tenant, { id: tenantId })).name;
  }

  private async inviterOf(invitation: Invitation): Promise<string> {
    const app =
      invitation.createdBy === null
        ? null
        : await this.applications.findForTenant(invitation.tenantId, invitation.createdBy);
    return app?.name ?? 'A member of the team';
  }

  private async find(
    tenantId: string,
    id: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Invitation> {
    const invitation = await manager.findOne(Invitation, { where: { tenantId, id } });
    if (invitation === null) {
      throw ApiError.notFound('Invitation');
    }
    return invitation;
  }

  /** The invitation to this exact (canonical) address. */
  private findByEmail(manager: EntityManager, tenantId: string, email: string): Promise<Invitation | null> {
    return manager.findOne(Invitation, { where: { tenantId, email } });
  }
}

function newSecret(): string {
  return base58Fixed(randomBytes(SECRET_BYTES));
}

export function toInvitationDto(
  i: Invitation,
  now: Date,
  delivery: InvitationDeliveryDto | null,
): InvitationDto {
  return {
    id: i.id,
    tenant_id: i.tenantId,
    email: i.email,
    role: 'ADMIN',
    status: statusAt(i, now),
    expires_at: i.expiresAt.toISOString(),
    created_by: i.createdBy,
    created_at: i.createdAt.toISOString(),
    modified_by: i.modifiedBy,
    modified_at: i.modifiedAt?.toISOString() ?? null,
    delivery,
  };
}
