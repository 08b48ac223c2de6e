import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** One API key of an application; an application holds any number of them (rotation), each with a version. */
@Entity('application_keys')
export class ApplicationKey {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('uuid')
  id: string;

  @Column('uuid', { name: 'application_id' })
  applicationId: string;

  @Column('int')
  version: number;

  /** SHA-256 of the API key; the key itself is shown once and never stored. */
  @Index({ unique: true })
  @Column('text', { name: 'key_hash' })
  keyHash: string;

  @Column('uuid', { name: 'created_by', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
