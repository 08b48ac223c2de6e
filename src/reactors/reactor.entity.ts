import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Audited } from '../database/audited';

/** A configured instance of a formula. `configuration` is sealed JSON (it holds partners' API keys). */
@Entity('reactors')
export class Reactor extends Audited {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('uuid')
  id: string;

  @Column('text')
  name: string;

  @Column('uuid', { name: 'formula_id' })
  formulaId: string;

  @Column('uuid', { name: 'application_id', nullable: true })
  applicationId: string | null;

  @Column('bytea')
  configuration: Buffer;
}
