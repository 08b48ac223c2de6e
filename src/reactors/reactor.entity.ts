import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A configured instance of a formula. `configuration` is sealed JSON (it holds partners' API keys). */
@Entity('reactors')
export class Reactor {
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

  @Column('uuid', { name: 'created_by', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('uuid', { name: 'modified_by', nullable: true })
  modifiedBy: string | null;

  @Column('timestamptz', { name: 'modified_at', nullable: true })
  modifiedAt: Date | null;
}
