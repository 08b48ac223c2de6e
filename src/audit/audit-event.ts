import type { Principal } from '../access/principal';

export type ActorType = 'application' | 'session' | 'user' | 'system';
export const ACTOR_TYPES: readonly ActorType[] = ['application', 'session', 'user', 'system'];
export type AuditOutcome = 'success' | 'denied' | 'failed';

/** What GET /logs/entity-types lists, with the names the SDK shows. */
export const AUDIT_ENTITY_TYPES = {
  token: 'Token',
  token_intent: 'Token Intent',
  application: 'Application',
  reactor: 'Reactor',
  reactor_formula: 'Reactor Formula',
  proxy: 'Proxy',
  tenant: 'Tenant',
  tenant_member: 'Tenant Member',
  tenant_invitation: 'Tenant Invitation',
  tenant_key: 'Tenant Key',
  webhook: 'Webhook',
  client_encryption_key: 'Client Encryption Key',
  document: 'Document',
  log: 'Log',
} as const;

export type AuditEntityType = keyof typeof AUDIT_ENTITY_TYPES;

/**
 * One security-relevant action, as a service reports it. `message` is a fixed sentence of the service:
 * never token data, keys, bodies, headers, arguments or configuration.
 */
export interface AuditEvent {
  tenantId: string;
  /** The calling application; null for the vault itself or the operator CLI (actor_type system). */
  actor: Principal | { userId: string } | null;
  entityType: AuditEntityType;
  /** Null for actions on a collection (a list, a search). */
  entityId: string | null;
  operation: string;
  outcome?: AuditOutcome;
  message: string;
  /** The tokens an action on several of them disclosed or created, findable by `GET /logs?entity_id=`. */
  tokenIds?: readonly string[];
}

/** The request an action came from, as far as the audit trail keeps it. */
export interface RequestOrigin {
  requestId: string | null;
  remoteAddress: string | null;
  userAgent: string | null;
}

const RECORD_COLUMNS = [
  'tenant_id',
  'id',
  'created_at',
  'actor_id',
  'actor_type',
  'entity_type',
  'entity_id',
  'operation',
  'outcome',
  'message',
  'request_id',
  'remote_address',
  'user_agent',
  'token_ids',
];

/** A record's columns (what its hash covers; not the sealer's `xid`), for a statement, of `alias` if given. */
export function recordColumns(alias?: string): string {
  return RECORD_COLUMNS.map((c) => (alias === undefined ? c : `${alias}.${c}`)).join(', ');
}

/**
 * recordColumns(alias) for reading records back: `token_ids` as JSON, which JSON.parse reads in native code
 * where pg's text-array parser walks every character of a list's 20 ids in JavaScript (the same strings).
 */
export function readRecordColumns(alias: string): string {
  return RECORD_COLUMNS.map((c) =>
    c === 'token_ids' ? `to_json(${alias}.token_ids) AS token_ids` : `${alias}.${c}`,
  ).join(', ');
}

/** A stored record: the event's columns (its place in the tenant's chain is its row of `audit_links`). */
export interface AuditRow {
  tenant_id: string;
  id: string;
  created_at: Date;
  actor_id: string | null;
  actor_type: ActorType;
  entity_type: string;
  entity_id: string | null;
  operation: string;
  outcome: AuditOutcome;
  message: string;
  request_id: string | null;
  remote_address: string | null;
  user_agent: string | null;
  /** Null on records of one entity (entity_id) and on records written before the column existed. */
  token_ids: string[] | null;
}

/** A record with its link of the chain (null while it is not yet chained). */
export interface LinkedRow extends AuditRow {
  seq: string | null;
  prev_hash: string | null;
  hash: string | null;
  key_id: string | null;
}

export function actorOf(actor: AuditEvent['actor']): { actorId: string | null; actorType: ActorType } {
  if (actor === null) {
    return { actorId: null, actorType: 'system' };
  }
  if ('userId' in actor) {
    return { actorId: actor.userId, actorType: 'user' };
  }
  return actor.session !== undefined
    ? { actorId: actor.session.id, actorType: 'session' }
    : { actorId: actor.applicationId, actorType: 'application' };
}

/** The message as recorded: a session's names the application it belongs to and the one that authorized it. */
export function recordedMessage(event: AuditEvent): string {
  const actor = event.actor;
  if (actor === null || 'userId' in actor || actor.session === undefined) {
    return event.message;
  }
  const authorized = actor.session.authorizedBy ?? 'none (not authorized)';
  return `${event.message} [session of application ${actor.applicationId}, authorized by application ${authorized}]`;
}

/** A successful action of `actor` on one entity (or, with entityId null, on a collection). */
export function auditEvent(
  actor: Principal,
  entityType: AuditEntityType,
  entityId: string | null,
  operation: string,
  message: string,
): AuditEvent {
  return { tenantId: actor.tenantId, actor, entityType, entityId, operation, message };
}

/** The ids an action used, in its message (bounded: a page holds at most 100). */
function naming(what: string, ids: readonly string[]): string {
  return ids.length === 0 ? `${what}: none` : `${what}: ${ids.join(', ')}`;
}

/**
 * A successful action of `actor` on several tokens: each is named in the message (with its `labels`, such as
 * the transform a detokenization used, when given) and kept in `token_ids`, so a filter by any of them finds
 * the record.
 */
export function tokensEvent(
  actor: Principal,
  operation: string,
  what: string,
  ids: readonly string[],
  labels: readonly string[] = ids,
): AuditEvent {
  return { ...auditEvent(actor, 'token', null, operation, naming(what, labels)), tokenIds: ids };
}
