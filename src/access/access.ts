import { containerCovers, normalizeRuleContainer } from './containers';
import type { AccessRule, RuleCondition, Transform } from './access-rules';
import type { Permission } from './permissions';
import type { Principal } from './principal';

/** What an application sees of token data per operation when it has permissions and no rules (DESIGN §7). */
export const DEFAULT_TRANSFORM: Partial<Record<Permission, Transform>> = {
  'token:create': 'mask',
  'token:update': 'mask',
  'token:read': 'mask',
  'token:search': 'mask',
  'token:delete': 'redact',
  'token:use': 'reveal',
  'documents:create': 'redact',
  'documents:read': 'reveal',
  'documents:delete': 'redact',
};

/**
 * The transform the principal gets for `permission` on a token in `containers` (with id `tokenId` when the
 * caller knows it), or null when no access rule allows it. Rules are tried by ascending priority; the first
 * one holding the permission, covering one of the containers and meeting its conditions wins.
 */
export function transformFor(
  principal: Principal,
  permission: Permission,
  containers: readonly string[],
  tokenId?: string,
): Transform | null {
  if (principal.rules.length === 0) {
    return principal.permissions.has(permission) ? (DEFAULT_TRANSFORM[permission] ?? 'redact') : null;
  }
  // Rules are stored sorted by the applications API; choosing by priority keeps this right for any order.
  let chosen: (typeof principal.rules)[number] | null = null;
  for (const rule of principal.rules) {
    if (
      (chosen === null || rule.priority < chosen.priority) &&
      rule.permissions.includes(permission) &&
      containers.some((c) => containerCovers(rule.container, c)) &&
      (rule.conditions ?? []).every((c) => conditionHolds(c, containers, tokenId))
    ) {
      chosen = rule;
    }
  }
  return chosen?.transform ?? null;
}

/** A condition on a token id never holds where the id is not known (a create, a list's scope). */
function conditionHolds(condition: RuleCondition, containers: readonly string[], tokenId?: string): boolean {
  if (condition.attribute === 'id') {
    return (
      tokenId !== undefined &&
      (condition.operator === 'equals' ? tokenId === condition.value : tokenId.startsWith(condition.value))
    );
  }
  const wanted = normalizeRuleContainer(condition.value);
  return containers.some((c) =>
    condition.operator === 'equals'
      ? normalizeRuleContainer(c) === wanted
      : containerCovers(condition.value, c),
  );
}

function unconditional(rule: AccessRule): boolean {
  return rule.conditions === undefined || rule.conditions.length === 0;
}

/**
 * The transform transformFor() gives for `permission` on every token, whatever its (one or more valid)
 * containers, or null when it depends on them or nothing is allowed: a rule-less application's default,
 * or the first rule by priority holding the permission when it names the root \`/\`.
 */
export function uniformTransform(principal: Principal, permission: Permission): Transform | null {
  if (principal.rules.length === 0) {
    return transformFor(principal, permission, []);
  }
  let first: (typeof principal.rules)[number] | null = null;
  for (const rule of principal.rules) {
    if ((first === null || rule.priority < first.priority) && rule.permissions.includes(permission)) {
      first = rule;
    }
  }
  return first !== null && normalizeRuleContainer(first.container) === '/' && unconditional(first)
    ? first.transform
    : null;
}

/**
 * The transform for a write (create, update) of a token in `containers`: every container must be covered
 * by a rule granting `permission`, or null. Of the transforms found, the one showing least wins.
 */
export function writeTransform(
  principal: Principal,
  permission: Permission,
  containers: readonly string[],
  tokenId?: string,
): Transform | null {
  let least: Transform | null = null;
  for (const container of containers) {
    const transform = transformFor(principal, permission, [container], tokenId);
    if (transform === null) {
      return null;
    }
    least = least === null ? transform : leastVisible(least, transform);
  }
  return least;
}

/** Of two transforms, the one that shows less of the data. */
export function leastVisible(a: Transform, b: Transform): Transform {
  return VISIBILITY[a] <= VISIBILITY[b] ? a : b;
}

/**
 * Container prefixes under which the principal holds `permission`, or 'all' for a rule-less application
 * holding it. Used to filter lists in SQL so pagination counts only what the caller may see.
 */
export function containerScope(principal: Principal, permission: Permission): 'all' | string[] {
  if (principal.rules.length === 0) {
    return principal.permissions.has(permission) ? 'all' : [];
  }
  // Normalized as containerCovers does, so a list shows what a get would allow (a session's conditioned
  // rules aside: a list shows none of their tokens).
  return principal.rules
    .filter((r) => r.permissions.includes(permission) && unconditional(r))
    .map((r) => normalizeRuleContainer(r.container))
    .filter((c): c is string => c !== null);
}

/** Responses to writes show at most masked data, whatever the rule says. */
export function atMostMask(transform: Transform): Transform {
  return transform === 'reveal' ? 'mask' : transform;
}

/** Permissions through which an application gets to see token data, and how much each transform shows. */
const DATA_PERMISSIONS: readonly Permission[] = ['token:read', 'token:search', 'token:use'];
export const VISIBILITY: Record<Transform, number> = { redact: 0, mask: 1, reveal: 2 };

function visibility(principal: Principal, permission: Permission, containers: readonly string[]): number {
  const transform = transformFor(principal, permission, containers);
  return transform === null ? 0 : VISIBILITY[transform];
}

/** True when some permission would show the principal more of a token's data in `to` than in `from`. */
export function seesMoreIn(principal: Principal, from: readonly string[], to: readonly string[]): boolean {
  return DATA_PERMISSIONS.some((p) => visibility(principal, p, to) > visibility(principal, p, from));
}

/** True when some permission shows (or sends on) the token's data in full to the principal. */
export function mayReveal(principal: Principal, containers: readonly string[]): boolean {
  return DATA_PERMISSIONS.some((p) => transformFor(principal, p, containers) === 'reveal');
}
