import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Audited } from '../../database/audited';

export const INVITATION_STATUSES = ['PENDING', 'EXPIRED'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

@Entity('tenant_invitations')
export class Invitation extends Audited {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('uuid')
  id: string;

  @Column('text')
  email: string;

  /** As stored; reads use statusAt(), which is EXPIRED from expires_at on, before the job runs. */
  @Column('text')
  status: InvitationStatus;

  /** SHA-256 of the acceptance secret; the secret itself is only ever in the e-mail. */
  @Column('text', { name: 'secret_hash' })
  secretHash: string;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt: Date;
}

export function statusAt(invitation: Invitation, now: Date): InvitationStatus {
  return invitation.status === 'PENDING' && invitation.expiresAt.getTime() <= now.getTime()
    ? 'EXPIRED'
    : invitation.status;
}
