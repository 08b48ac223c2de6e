import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('tenants')
export class Tenant {
  @PrimaryColumn('uuid')
  id: string;

  @Column('text')
  name: string;

  @Column('uuid', { name: 'owner_id', nullable: true })
  ownerId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('jsonb', { default: () => "'{}'" })
  settings: Record<string, string>;

  @Column('text', { name: 'security_contact_email', nullable: true })
  securityContactEmail: string | null;

  @Column('uuid', { name: 'modified_by', nullable: true })
  modifiedBy: string | null;

  @Column('timestamptz', { name: 'modified_at', nullable: true })
  modifiedAt: Date | null;

  /** Set by DELETE /tenants/self: the tenant's keys stop at once, its data goes after the grace period. */
  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt: Date | null;
}
