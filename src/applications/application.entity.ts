import type { ApplicationType } from '../access/application-type';
import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import type { AccessRule } from '../access/access-rules';

@Entity('applications')
export class Application {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('uuid')
  id: string;

  @Column('text')
  name: string;

  @Column('text')
  type: ApplicationType;

  @Column('jsonb', { default: () => "'[]'" })
  permissions: string[];

  @Column('jsonb', { default: () => "'[]'" })
  rules: AccessRule[];

  /** SHA-256 of the API key; the key itself is shown once and never stored. */
  @Index({ unique: true })
  @Column('text', { name: 'key_hash' })
  keyHash: string;

  @Column('uuid', { name: 'created_by', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('uuid', { name: 'modified_by', nullable: true })
  modifiedBy: string | null;

  @Column('timestamptz', { name: 'modified_at', nullable: true })
  modifiedAt: Date | null;
}
