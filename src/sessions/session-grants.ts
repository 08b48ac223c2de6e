import type { AccessRule, RuleCondition } from '../access/access-rules';
import { normalizeRuleContainer } from '../access/containers';
import { isPermission, Permission, TOKEN_PERMISSIONS } from '../access/permissions';
import { ApiError, FieldErrors } from '../common/api-error';
import type { AuthorizeSessionDto, SessionAccessRuleDto } from './dto/session.dto';

/** What a session may do once authorized. */
export interface SessionGrants {
  permissions: Permission[];
  rules: AccessRule[];
}

/**
 * The authorize request's permissions and rules, checked: known token permissions, each rule with either a
 * container or conditions (a container condition names a container), at least one of the two lists
 * non-empty. Sessions act on tokens only, so other permissions are refused.
 */
export function checkSessionGrants(dto: AuthorizeSessionDto): SessionGrants {
  const errors: FieldErrors = {};
  const add = (path: string, message: string): void => {
    (errors[path] ??= []).push(message);
  };
  const checkList = (list: string[], path: string): Permission[] => {
    list.forEach((p, i) => {
      if (!isPermission(p)) {
        add(`${path}[${i}]`, 'unknown permission');
      } else if (!TOKEN_PERMISSIONS.includes(p)) {
        add(`${path}[${i}]`, 'a session holds token permissions only');
      }
    });
    return [...new Set(list.filter(isPermission))];
  };
  const permissions = checkList(dto.permissions ?? [], 'permissions');
  const rules = (dto.rules ?? []).map((rule, i) => checkRule(rule, `rules[${i}]`, add, checkList));
  if (permissions.length === 0 && rules.length === 0 && Object.keys(errors).length === 0) {
    add('permissions', 'either permissions or rules must be non-empty');
  }
  if (Object.keys(errors).length > 0) {
    throw ApiError.validation(errors);
  }
  return { permissions, rules: rules.sort((a, b) => a.priority - b.priority) };
}

function checkRule(
  rule: SessionAccessRuleDto,
  path: string,
  add: (path: string, message: string) => void,
  checkList: (list: string[], path: string) => Permission[],
): AccessRule {
  const conditions = rule.conditions ?? [];
  if (rule.container === undefined && conditions.length === 0) {
    add(path, 'must have a container or conditions');
  } else if (rule.container !== undefined && conditions.length > 0) {
    add(path, 'must have a container or conditions, not both');
  }
  const container = rule.container === undefined ? '/' : normalizeRuleContainer(rule.container);
  if (container === null) {
    add(`${path}.container`, 'must be / or a container path such as /pci/');
  }
  conditions.forEach((c, j) => {
    if (c.attribute === 'container' && normalizeRuleContainer(c.value) === null) {
      add(`${path}.conditions[${j}].value`, 'must be / or a container path such as /pci/');
    }
  });
  if (rule.permissions.length === 0) {
    add(`${path}.permissions`, 'must grant at least one permission');
  }
  return {
    description: rule.description ?? null,
    priority: rule.priority,
    container: container ?? '/',
    transform: rule.transform,
    permissions: checkList(rule.permissions, `${path}.permissions`),
    ...(conditions.length > 0
      ? {
          conditions: conditions.map((c): RuleCondition => ({
            attribute: c.attribute,
            operator: c.operator,
            value: c.value,
          })),
        }
      : {}),
  };
}
