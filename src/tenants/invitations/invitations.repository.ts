import { Injectable } from '@nestjs/common';
import { Brackets } from 'typeorm';
import { Database } from '../../database/database.service';
import { Invitation, InvitationStatus } from './invitation.entity';

/** What a resend changes: a new link, a new expiry, PENDING again. */
export type InvitationRenewal = Pick<
  Invitation,
  'status' | 'secretHash' | 'expiresAt' | 'modifiedBy' | 'modifiedAt'
>;

@Injectable()
export class InvitationsRepository {
  constructor(private readonly db: Database) {}

  find(tenantId: string, id: string): Promise<Invitation | null> {
    return this.db.repository(Invitation).findOne({ where: { tenantId, id } });
  }

  /** The invitation to this exact (canonical) address. */
  findByEmail(tenantId: string, email: string): Promise<Invitation | null> {
    return this.db.repository(Invitation).findOne({ where: { tenantId, email } });
  }

  /** The invitation whose link's secret hashes to `secretHash`, whatever its tenant: the link names none. */
  findBySecret(secretHash: string): Promise<Invitation | null> {
    return this.db.repository(Invitation).findOne({ where: { secretHash } });
  }

  /** As findBySecret, locked until the transaction ends: a link is accepted once. */
  lockBySecret(secretHash: string): Promise<Invitation | null> {
    return this.db
      .repository(Invitation)
      .createQueryBuilder('i')
      .setLock('pessimistic_write')
      .where('i.secret_hash = :hash', { hash: secretHash })
      .getOne();
  }

  /**
   * One page of the tenant's invitations, newest first, and how many there are; `status` as statusAt
   * reads it at `now` (past expires_at is EXPIRED, whatever is stored).
   */
  page(
    tenantId: string,
    page: { status?: InvitationStatus; now: Date; offset: number; size: number },
  ): Promise<[Invitation[], number]> {
    const builder = this.db
      .repository(Invitation)
      .createQueryBuilder('i')
      .where('i.tenant_id = :tenantId', { tenantId });
    if (page.status === 'PENDING') {
      builder.andWhere("i.status = 'PENDING' AND i.expires_at > :now", { now: page.now });
    } else if (page.status === 'EXPIRED') {
      builder.andWhere(
        new Brackets((q) =>
          q.where("i.status = 'EXPIRED'").orWhere('i.expires_at <= :now', { now: page.now }),
        ),
      );
    }
    return builder
      .orderBy('i.created_at', 'DESC')
      .addOrderBy('i.id', 'ASC')
      .skip(page.offset)
      .take(page.size)
      .getManyAndCount();
  }

  async insert(invitation: Invitation): Promise<void> {
    await this.db.repository(Invitation).insert(invitation);
  }

  async renew(tenantId: string, id: string, renewal: InvitationRenewal): Promise<void> {
    await this.db.repository(Invitation).update({ tenantId, id }, renewal);
  }

  /** Whether there was such an invitation. */
  async remove(tenantId: string, id: string): Promise<boolean> {
    return ((await this.db.repository(Invitation).delete({ tenantId, id })).affected ?? 0) > 0;
  }

  /** PENDING invitations past expires_at become EXPIRED, of every tenant at once; how many. */
  expireDue(now: Date): Promise<number> {
    return this.db.execute(
      "UPDATE tenant_invitations SET status = 'EXPIRED', modified_at = $1 WHERE status = 'PENDING' AND expires_at <= $1",
      [now],
    );
  }
}
