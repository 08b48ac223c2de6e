import type { ApplicationType } from './application-type';

/** Every permission and the application types that may hold it (spec §5, DESIGN §7). */
export const PERMISSIONS = {
  'token:create': ['public', 'private'],
  'token:update': ['public', 'private'],
  'token:read': ['private'],
  'token:delete': ['private'],
  'token:use': ['private'],
  'token:search': ['private'],
  'token-intent:create': ['public', 'private'],
  'token-intent:read': ['private'],
  'token-intent:delete': ['private'],
  'documents:create': ['private'],
  'documents:read': ['private'],
  'documents:delete': ['private'],
  'application:create': ['management'],
  'application:read': ['management'],
  'application:update': ['management'],
  'application:delete': ['management'],
  'reactor:create': ['management'],
  'reactor:read': ['management'],
  'reactor:update': ['management'],
  'reactor:delete': ['management'],
  'proxy:create': ['management'],
  'proxy:read': ['management'],
  'proxy:update': ['management'],
  'proxy:delete': ['management'],
  'tenant:read': ['management'],
  'tenant:update': ['management'],
  'tenant:member:read': ['management'],
  'tenant:member:update': ['management'],
  'tenant:member:delete': ['management'],
  'tenant:invitation:create': ['management'],
  'tenant:invitation:read': ['management'],
  'tenant:invitation:update': ['management'],
  'tenant:invitation:delete': ['management'],
  'log:read': ['management'],
  'webhook:create': ['management'],
  'webhook:read': ['management'],
  'webhook:update': ['management'],
  'webhook:delete': ['management'],
  'keys:create': ['management'],
  'keys:read': ['management'],
  'keys:delete': ['management'],
} as const satisfies Record<string, readonly ApplicationType[]>;

export type Permission = keyof typeof PERMISSIONS;

export const ALL_PERMISSIONS = Object.keys(PERMISSIONS) as Permission[];

export const TOKEN_PERMISSIONS = ALL_PERMISSIONS.filter((p) => p.startsWith('token:'));

/** The permissions access rules grant per container: token and document access. */
export const RULE_PERMISSIONS = ALL_PERMISSIONS.filter(
  (p) => p.startsWith('token:') || p.startsWith('documents:'),
);

export function isPermission(value: string): value is Permission {
  return Object.prototype.hasOwnProperty.call(PERMISSIONS, value);
}

export function permissionAllowedFor(permission: Permission, type: ApplicationType): boolean {
  return (PERMISSIONS[permission] as readonly ApplicationType[]).includes(type);
}

/** Everything a type may hold: what the bootstrap management application gets. */
export function permissionsFor(type: ApplicationType): Permission[] {
  return ALL_PERMISSIONS.filter((p) => permissionAllowedFor(p, type));
}
