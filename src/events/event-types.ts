/** Every event a webhook can subscribe to (GET /webhooks/event-types). */
export const EVENT_TYPES = [
  'token.created',
  'token.updated',
  'token.deleted',
  'token.expired',
  'application.created',
  'application.updated',
  'application.deleted',
  'application.key.regenerated',
  'reactor.created',
  'reactor.updated',
  'reactor.deleted',
  'proxy.created',
  'proxy.updated',
  'proxy.deleted',
  'tenant.member.created',
  'tenant.member.updated',
  'tenant.member.deleted',
  'tenant.invitation.created',
  'tenant.invitation.resent',
  'tenant.invitation.deleted',
  'tenant.invitation.accepted',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}

/**
 * What an event says about its subject: ids, kinds and timestamps only. Never token data, names, e-mail
 * addresses, keys or configuration: a receiver that needs more reads it through the API with its own key.
 */
export interface EventSubject {
  /** The id of the token, application, reactor, proxy, member (user id) or invitation. */
  id: string;
  /** The token's type (`card`, `bank`, `token`) or the application's type; absent for other subjects. */
  type?: string;
}

/** One event to publish. */
export interface VaultEvent {
  tenantId: string;
  type: EventType;
  subject: EventSubject;
}
