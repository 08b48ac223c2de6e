import type { ApplicationType } from './application-type';
import { DEFAULT_TRANSFORM, VISIBILITY } from './access';
import type { AccessRule, Transform } from './access-rules';
import { containerCovers, normalizeRuleContainer } from './containers';
import { isPermission, RULE_PERMISSIONS, type Permission } from './permissions';
import type { Principal } from './principal';

/** What an application may do, as the granting rule compares it: its permissions and its access rules. */
export interface Grants {
  type: ApplicationType;
  permissions: readonly string[];
  rules: readonly AccessRule[];
}

/** One token permission on one container, with what it shows of the data. */
interface TokenGrant {
  permission: Permission;
  container: string;
  transform: Transform;
}

/**
 * The rule a management application's own key is created with: it may hand out any token or document access. A
 * management application's rules are what it may grant to others (token routes stay closed to it).
 */
export const DELEGATE_EVERYTHING: AccessRule = {
  description: 'May grant any token or document access to the applications it manages',
  priority: 1,
  container: '/',
  transform: 'reveal',
  permissions: [...RULE_PERMISSIONS],
};

/**
 * The token access an application holds: its rules, or, for a private or public application without rules,
 * its token permissions on every container with the default transforms (DESIGN §7). A management
 * application holds token access only as the rules it may delegate.
 */
function tokenGrants(grants: Grants): TokenGrant[] {
  if (grants.rules.length === 0) {
    if (grants.type === 'management') {
      return [];
    }
    return grants.permissions
      .filter((p): p is Permission => isPermission(p) && RULE_PERMISSIONS.includes(p))
      .map((permission) => ({
        permission,
        container: '/',
        transform: DEFAULT_TRANSFORM[permission] ?? 'redact',
      }));
  }
  return [...grants.rules]
    .sort((a, b) => a.priority - b.priority)
    .flatMap((rule) =>
      rule.permissions.filter(isPermission).map((permission) => ({
        permission,
        container: judgedContainer(rule),
        transform: rule.transform,
      })),
    );
}

/**
 * The container a rule is judged on: its own, or a session rule's container condition (a condition on
 * token ids alone is judged as on `/`: the vault cannot tell which containers those tokens will be in).
 */
function judgedContainer(rule: AccessRule): string {
  const byContainer = (rule.conditions ?? []).find((c) => c.attribute === 'container');
  const container = byContainer?.value ?? rule.container;
  return normalizeRuleContainer(container) ?? container;
}

/**
 * True when the caller's grants, tried in priority order as the vault tries rules, give `wanted` at least
 * its transform: an earlier rule that shows less could win for a token that also sits in its container
 * (a token may have several), so it must not come before the covering one.
 */
function covered(held: readonly TokenGrant[], wanted: TokenGrant): boolean {
  for (const grant of held) {
    if (grant.permission !== wanted.permission) {
      continue;
    }
    if (VISIBILITY[grant.transform] < VISIBILITY[wanted.transform]) {
      return false;
    }
    if (
      grant.container === '/' ||
      (wanted.container !== '/' && containerCovers(grant.container, wanted.container))
    ) {
      return true;
    }
  }
  return false;
}

/**
 * What `wanted` holds that `caller` does not, as short phrases (empty when the caller holds all of it):
 * a permission it lacks, or token access on a container or with a transform beyond its own rules.
 */
/** A token intent permission is granted by whoever may grant the token permission it leads to. */
const INTENT_AS_TOKEN: Partial<Record<string, Permission>> = {
  'token-intent:create': 'token:create',
  'token-intent:read': 'token:read',
  'token-intent:delete': 'token:delete',
};

export function ungrantable(caller: Principal, wanted: Grants): string[] {
  const held = tokenGrants({
    type: caller.applicationType,
    permissions: [...caller.permissions],
    rules: caller.rules,
  });
  const missing: string[] = [];
  for (const permission of new Set(wanted.permissions)) {
    const asToken = INTENT_AS_TOKEN[permission] ?? permission;
    const isToken = isPermission(asToken) && RULE_PERMISSIONS.includes(asToken);
    if (
      isToken
        ? !held.some((h) => h.permission === asToken)
        : !caller.permissions.has(permission as Permission)
    ) {
      missing.push(permission);
    }
  }
  for (const grant of tokenGrants(wanted)) {
    if (!covered(held, grant)) {
      missing.push(`${grant.permission} with ${grant.transform} on ${grant.container}`);
    }
  }
  return [...new Set(missing)];
}
