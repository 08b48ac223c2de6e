import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Audited } from '../database/audited';

export const FORMULA_TYPES = ['official', 'private'] as const;
export type FormulaType = (typeof FORMULA_TYPES)[number];
export const FORMULA_STATUSES = ['verified', 'coming_soon'] as const;
export type FormulaStatus = (typeof FORMULA_STATUSES)[number];
export const PARAMETER_TYPES = ['string', 'boolean', 'number'] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];

export interface FormulaConfigurationItem {
  name: string;
  description: string | null;
  type: ParameterType;
}

export interface FormulaRequestParameter {
  name: string;
  description: string | null;
  type: ParameterType;
  optional: boolean;
}

/** A stored code template: official ones (no tenant) come from the operator, private ones from a tenant. */
@Entity('reactor_formulas')
export class ReactorFormula extends Audited {
  @PrimaryColumn('uuid')
  id: string;

  /** Null for official formulas, which every tenant sees. */
  @Column('uuid', { name: 'tenant_id', nullable: true })
  tenantId: string | null;

  @Column('text')
  name: string;

  @Column('text', { nullable: true })
  description: string | null;

  @Column('text')
  type: FormulaType;

  @Column('text')
  status: FormulaStatus;

  @Column('text', { nullable: true })
  icon: string | null;

  @Column('text')
  code: string;

  @Column('jsonb')
  configuration: FormulaConfigurationItem[];

  @Column('jsonb', { name: 'request_parameters' })
  requestParameters: FormulaRequestParameter[];
}
