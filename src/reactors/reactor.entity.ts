import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Audited } from '../database/audited';
import type { ReactorRuntime } from './reactor-rules';

/** A configured instance of a formula, or code of its own. `configuration` is sealed JSON (it holds partners' API keys). */
@Entity('reactors')
export class Reactor extends Audited {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('uuid')
  id: string;

  @Column('text')
  name: string;

  /** Exactly one of `formulaId` and `code` is set (a formula reactor or a code reactor). */
  @Column('uuid', { name: 'formula_id', nullable: true })
  formulaId: string | null;

  @Column('text', { nullable: true })
  code: string | null;

  @Column('jsonb', { nullable: true })
  runtime: ReactorRuntime | null;

  @Column('uuid', { name: 'application_id', nullable: true })
  applicationId: string | null;

  @Column('bytea')
  configuration: Buffer;
}
