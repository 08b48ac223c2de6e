export const TRANSFORMS = ['reveal', 'mask', 'redact'] as const;
export type Transform = (typeof TRANSFORMS)[number];

export const CONDITION_ATTRIBUTES = ['id', 'container'] as const;
export const CONDITION_OPERATORS = ['equals', 'starts_with'] as const;

/** A session rule's condition on the token: all of a rule's conditions must hold for the rule to apply. */
export interface RuleCondition {
  attribute: (typeof CONDITION_ATTRIBUTES)[number];
  operator: (typeof CONDITION_OPERATORS)[number];
  value: string;
}

/** An application's access rule: which containers it may touch with which token permissions, and what data it sees. */
export interface AccessRule {
  description: string | null;
  priority: number;
  container: string;
  transform: Transform;
  permissions: string[];
  /** Sessions only (their container is then `/`): a rule naming token ids applies only where the id is known. */
  conditions?: readonly RuleCondition[];
}
