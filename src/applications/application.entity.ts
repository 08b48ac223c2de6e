import type { ApplicationType } from '../access/application-type';
import { Column, Entity, PrimaryColumn } from 'typeorm';
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

  /** The version of the last key issued; the next key gets the one after it. */
  @Column('int', { name: 'key_version', default: 1 })
  keyVersion: number;
}
