import { Injectable } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import { Principal } from '../../access/principal';
import { ApplicationLookups } from '../../applications/application-lookups.service';
import { auditEvent } from '../../audit/audit-event';
import { AuditService } from '../../audit/audit.service';
import { ApiError } from '../../common/api-error';
import { Clock } from '../../common/clock';
import { Page, pageOf, pageOffset } from '../../common/pagination';
import { base58Fixed, hashSecret } from '../../crypto';
import { Database } from '../../database/database.service';
import { Events } from '../../events/events';
import { canonicalEmail, emailRefusal, isCanonicalEmail } from '../email';
import { MembersService, toMemberDto } from '../members.service';
import { TenantsService } from '../tenants.service';
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
import { InvitationsRepository } from './invitations.repository';

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
    private readonly invitations: InvitationsRepository,
    private readonly db: Database,
    private readonly applications: ApplicationLookups,
    private readonly outbox: InvitationOutbox,
    private readonly sender: InvitationMailSender,
    private readonly mailThrottle: InvitationMailThrottle,
    private readonly clock: Clock,
    private readonly members: MembersService,
    private readonly tenants: TenantsService,
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
    const invitation = await this.db.transaction(async () => {
      if (await this.members.isMember(principal.tenantId, email)) {
        throw ApiError.conflict('This address belongs to a member of the tenant already.');
      }
      const existing = await this.invitations.findByEmail(principal.tenantId, email);
      if (existing !== null) {
        if (statusAt(existing, now) === 'PENDING') {
          throw ApiError.conflict('An invitation to this address is pending: resend it instead.');
        }
        await this.invitations.remove(principal.tenantId, existing.id);
      }
      await this.mailThrottle.take(principal.tenantId, email, now);
      const row: Invitation = {
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
      };
      await this.invitations.insert(row);
      await this.outbox.enqueue(row, 'create', mail, now);
      await this.audit.record(
        auditEvent(principal, 'tenant_invitation', row.id, 'create', 'Invitation created'),
      );
      await this.events.publish(principal.tenantId, 'tenant.invitation.created', { id: row.id });
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
    await this.db.transaction(async () => {
      const found = await this.find(principal.tenantId, id);
      await this.mailThrottle.take(principal.tenantId, found.email, now);
      Object.assign(found, {
        status: 'PENDING',
        secretHash: hashSecret(secret),
        expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_MS),
        modifiedBy: principal.applicationId,
        modifiedAt: now,
      });
      await this.invitations.renew(principal.tenantId, id, {
        status: found.status,
        secretHash: found.secretHash,
        expiresAt: found.expiresAt,
        modifiedBy: found.modifiedBy,
        modifiedAt: found.modifiedAt,
      });
      await this.outbox.enqueue(found, 'resend', mail, now);
      await this.audit.record(auditEvent(principal, 'tenant_invitation', id, 'resend', 'Invitation resent'));
      await this.events.publish(principal.tenantId, 'tenant.invitation.resent', { id });
    });
    await this.sender.sendSoon(mail.id);
    return this.get(principal, id);
  }

  async list(principal: Principal, query: ListInvitationsQueryDto): Promise<Page<InvitationDto>> {
    const now = this.clock.now();
    const [rows, total] = await this.invitations.page(principal.tenantId, {
      status: query.status,
      now,
      offset: pageOffset(query),
      size: query.size,
    });
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
    await this.db.transaction(async () => {
      if (!(await this.invitations.remove(principal.tenantId, id))) {
        throw ApiError.notFound('Invitation');
      }
      await this.audit.record(auditEvent(principal, 'tenant_invitation', id, 'delete', 'Invitation deleted'));
      await this.events.publish(principal.tenantId, 'tenant.invitation.deleted', { id });
    });
  }

  /** For the acceptance page: whose invitation a link is, or why it does not work. */
  async view(secret: string): Promise<InvitationView> {
    const invitation = await this.invitations.findBySecret(hashSecret(secret));
    if (invitation === null) {
      return { ok: false, status: 404, message: VOID_LINK };
    }
    if (statusAt(invitation, this.clock.now()) === 'EXPIRED') {
      return { ok: false, status: 410, message: EXPIRED_LINK };
    }
    return {
      ok: true,
      tenantName: await this.tenants.nameOf(invitation.tenantId),
      inviter: await this.inviterOf(invitation),
      email: invitation.email,
    };
  }

  /** Creates (or reuses) the user, makes them an ADMIN member and consumes the invitation, all at once. */
  async accept(secret: string, firstName: string, lastName: string): Promise<AcceptedInvitationDto> {
    const now = this.clock.now();
    const member = await this.db.transaction(async () => {
      const invitation = await this.invitations.lockBySecret(hashSecret(secret));
      // A stored address not in canonical form (written before canonicalisation) was mailed to a mailbox
      // that is not the user's it would fold to: it never attaches to anyone.
      if (invitation === null || !isCanonicalEmail(invitation.email)) {
        throw ApiError.notFound('Invitation');
      }
      if (statusAt(invitation, now) === 'EXPIRED') {
        throw new ApiError(410, EXPIRED_LINK);
      }
      await this.invitations.remove(invitation.tenantId, invitation.id);
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
  expireDue(now: Date): Promise<number> {
    return this.invitations.expireDue(now);
  }

  tenantNameOf(tenantId: string): Promise<string> {
    return this.tenants.nameOf(tenantId);
  }

  private async inviterOf(invitation: Invitation): Promise<string> {
    const app =
      invitation.createdBy === null
        ? null
        : await this.applications.findForTenant(invitation.tenantId, invitation.createdBy);
    return app?.name ?? 'A member of the team';
  }

  private async find(tenantId: string, id: string): Promise<Invitation> {
    const invitation = await this.invitations.find(tenantId, id);
    if (invitation === null) {
      throw ApiError.notFound('Invitation');
    }
    return invitation;
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
