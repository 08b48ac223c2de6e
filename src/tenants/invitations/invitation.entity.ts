import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const INVITATION_STATUSES = ['PENDING', 'EXPIRED'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

@Entity('tenant_invitations')
export class Invitation {
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

  @Column('uuid', { name: 'created_by', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('uuid', { name: 'modified_by', nullable: true })
  modifiedBy: string | null;

  @Column('timestamptz', { name: 'modified_at', nullable: true })
  modifiedAt: Date | null;
}

export function statusAt(invitation: Invitation, now: Date): InvitationStatus {
  return invitation.status === 'PENDING' && invitation.expiresAt.getTime() <= now.getTime()
    ? 'EXPIRED'
    : invitation.status;
}
