import { Column, Entity, PrimaryColumn } from 'typeorm';

export const DELIVERY_STATUSES = ['pending', 'sent', 'logged', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** An invitation e-mail in the outbox (migration InvitationOutbox): the one of the invitation's current link. */
@Entity('invitation_outbox')
export class InvitationMail {
  @PrimaryColumn('uuid')
  id: string;

  @Column('uuid', { name: 'tenant_id' })
  tenantId: string;

  @Column('uuid', { name: 'invitation_id' })
  invitationId: string;

  @Column('text')
  kind: 'create' | 'resend';

  @Column('text')
  status: DeliveryStatus;

  /** The link's secret sealed under the tenant's data key while pending; null once sent, logged or failed. */
  @Column('bytea', { nullable: true })
  secret: Buffer | null;

  @Column('int')
  attempts: number;

  /** Why the last attempt failed, as an error code (ECONNECTION, EENVELOPE 550): never a message. */
  @Column('text', { name: 'last_error', nullable: true })
  lastError: string | null;

  @Column('timestamptz', { name: 'last_attempt_at', nullable: true })
  lastAttemptAt: Date | null;

  @Column('timestamptz', { name: 'next_attempt_at' })
  nextAttemptAt: Date;

  @Column('timestamptz', { name: 'sent_at', nullable: true })
  sentAt: Date | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt: Date;
}
