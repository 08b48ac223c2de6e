import type { ApplicationType } from '../access/application-type';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { AccessRule } from '../access/access-rules';
import { Audited } from '../database/audited';

@Entity('applications')
export class Application extends Audited {
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
}
