import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Audited } from '../database/audited';

export const WEBHOOK_STATUSES = ['enabled', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** A webhook (migration Webhooks). `secret` is the signing secret, sealed under the tenant's data key. */
@Entity('webhooks')
export class Webhook extends Audited {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('uuid')
  id: string;

  @Column('text')
  name: string;

  @Column('text')
  url: string;

  @Column('text', { name: 'notify_email', nullable: true })
  notifyEmail: string | null;

  @Column('text', { array: true })
  events: string[];

  @Column('text')
  status: WebhookStatus;

  @Column('bytea')
  secret: Buffer;

  /** Failed attempts since the last successful delivery; a sustained run disables the webhook. */
  @Column('int', { name: 'consecutive_failures' })
  consecutiveFailures: number;

  @Column('timestamptz', { name: 'failing_since', nullable: true })
  failingSince: Date | null;
}
