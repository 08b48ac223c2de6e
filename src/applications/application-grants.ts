import { AccessRule } from '../access/access-rules';
import { isPermission, Permission, permissionAllowedFor, RULE_PERMISSIONS } from '../access/permissions';
import { Grants, ungrantable } from '../access/grants';
import { Principal } from '../access/principal';
import { ApiError, FieldErrors } from '../common/api-error';
import { normalizeRuleContainer } from '../access/containers';
import { ApplicationType } from '../access/application-type';
import { AccessRuleDto } from './dto/application.dto';

/**
 * A caller grants, binds, updates, regenerates or deletes only what it holds itself: every permission, and
 * every access rule covered by one of its own (container at or under it, transform showing no more, the
 * permission). Otherwise a key with `application:create` could mint a key stronger than itself.
 */
export function requireGrantable(principal: Principal, wanted: Grants, action: string): void {
  const missing = ungrantable(principal, wanted);
  if (missing.length > 0) {
    const what = action === 'grant' ? 'grant' : `${action} an application holding`;
    throw ApiError.forbidden(
      `The application cannot ${what} what it does not hold itself: ${missing.slice(0, 10).join('; ')}.`,
    );
  }
}

/**
 * The permissions (and the rules' permissions) must exist and be allowed for the application type; a
 * management application's rules hold the token access it may delegate.
 */
export function checkGrants(
  type: ApplicationType,
  permissions: string[],
  rules: AccessRuleDto[],
): { permissions: Permission[]; rules: AccessRule[] } {
  const errors: FieldErrors = {};
  const add = (path: string, message: string): void => {
    (errors[path] ??= []).push(message);
  };
  const checkList = (list: string[], path: string, tokenOnly: boolean): Permission[] => {
    list.forEach((p, i) => {
      if (!isPermission(p)) {
        add(`${path}[${i}]`, `unknown permission`);
      } else if (tokenOnly && type === 'management' && RULE_PERMISSIONS.includes(p)) {
        return;
      } else if (!permissionAllowedFor(p, type)) {
        add(`${path}[${i}]`, `${p} cannot be granted to a ${type} application`);
      } else if (tokenOnly && !RULE_PERMISSIONS.includes(p)) {
        add(`${path}[${i}]`, `access rules grant token and document permissions only`);
      }
    });
    return [...new Set(list.filter(isPermission))];
  };
  const checkedPermissions = checkList(permissions, 'permissions', false);
  const checkedRules = rules.map((rule, i): AccessRule => {
    const container = normalizeRuleContainer(rule.container);
    if (container === null) {
      add(`rules[${i}].container`, 'must be / or a container path such as /pci/');
    }
    if (rule.permissions.length === 0) {
      add(`rules[${i}].permissions`, 'must grant at least one permission');
    }
    return {
      description: rule.description ?? null,
      priority: rule.priority,
      container: container ?? rule.container,
      transform: rule.transform,
      permissions: checkList(rule.permissions, `rules[${i}].permissions`, true),
    };
  });
  if (Object.keys(errors).length > 0) {
    throw ApiError.validation(errors);
  }
  return { permissions: checkedPermissions, rules: checkedRules.sort((a, b) => a.priority - b.priority) };
}
