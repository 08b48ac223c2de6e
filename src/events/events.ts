import { Global, Inject, Injectable, Module } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import type { StatementPart } from '../database/composed-statement';
import { preparedQuery } from '../database/prepared-query';
import { Transactions } from '../database/transactions';
import { currentTraceparent } from '../tracing/spans';
import { EventSubject, EventType, VaultEvent } from './event-types';

/**
 * The events go as one JSON array of their payloads (one JSON.stringify, not four arrays escaped element by
 * element): each delivery keeps its element's text as it was sent, which is what the webhook signs. The text
 * is read as JSON only when the tenants have an enabled webhook: for the others the statement is the one
 * look-up of the initial plan.
 */
const PUBLISH = publishSql(false);

/** With traces on: each delivery also keeps the publishing span's `traceparent`, to link its own span to. */
const PUBLISH_TRACED = publishSql(true);

/** The outbox INSERT's head, with the span's column when traced. */
function insertDeliveries(traced: boolean): string {
  return `INSERT INTO webhook_deliveries
    (tenant_id, id, webhook_id, event_id, event_type, payload, status, attempts, next_attempt_at, created_at${
      traced ? ', traceparent' : ''
    })`;
}

function publishSql(traced: boolean): string {
  return `${insertDeliveries(traced)}
  SELECT w.tenant_id, gen_random_uuid(), w.id, (e.payload ->> 'id')::uuid, e.payload ->> 'type', e.payload::text,
      'pending', 0, $3, $3${traced ? ', $4' : ''}
    FROM json_array_elements($2::text::json) AS e(payload)
    JOIN webhooks w ON w.tenant_id = (e.payload ->> 'tenant_id')::uuid AND w.status = 'enabled'
      AND e.payload ->> 'type' = ANY (w.events)
    WHERE EXISTS (SELECT 1 FROM webhooks l WHERE l.tenant_id = ANY ($1::uuid[]) AND l.status = 'enabled')`;
}

/**
 * Events of one tenant, type and subject type (a /tokenize's), by their subject ids alone, joined by a
 * control character (no id holds one): each payload is written by the database, as toPayload's JSON text,
 * and only when the tenant has an enabled webhook for the type, so a batch nobody listens to sends its ids
 * and nothing else. to_json escapes a text as JSON.stringify does; `e` is materialized so that every
 * webhook's delivery of an event has the one event id. $1 tenant, $2 event type, $3 subject ids,
 * $4 subject type, $5 created_at as text, $6 the time.
 */
const PUBLISH_BATCH = publishBatchSql(false);
const PUBLISH_BATCH_TRACED = publishBatchSql(true);

function publishBatchSql(traced: boolean): string {
  return `${insertDeliveries(traced)}
  WITH e AS MATERIALIZED (
    SELECT gen_random_uuid() AS id, s.subject FROM unnest(string_to_array($3::text, chr(31))) AS s(subject)
      WHERE EXISTS (SELECT 1 FROM webhooks l WHERE l.tenant_id = $1::uuid AND l.status = 'enabled'
        AND $2::text = ANY (l.events)))
  SELECT w.tenant_id, gen_random_uuid(), w.id, e.id, $2::text,
      '{"id":"' || e.id || '","type":' || to_json($2::text) || ',"tenant_id":' || to_json($1::text)
        || ',"created_at":' || to_json($5::text) || ',"data":{"id":' || to_json(e.subject) || ',"type":'
        || to_json($4::text) || '}}',
      'pending', 0, $6, $6${traced ? ', $7' : ''}
    FROM e JOIN webhooks w ON w.tenant_id = $1::uuid AND w.status = 'enabled' AND $2::text = ANY (w.events)`;
}

const SEPARATOR = '\x1f';

/** The JSON body a webhook receives (also what its signature covers). */
export interface EventPayload {
  id: string;
  type: EventType;
  tenant_id: string;
  created_at: string;
  data: EventSubject;
}

/**
 * Publishes events to the webhook outbox. Call it inside the transaction of the change (pass its manager,
 * or run under Transactions.run): one statement writes one delivery row per enabled webhook of the tenant
 * that subscribes to the event type, so the change and its deliveries commit or roll back together, and a
 * tenant without webhooks costs one indexed look-up that finds nothing.
 */
@Injectable()
export class Events {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  /** One event about `subject` in `tenantId`. */
  async publish(
    tenantId: string,
    type: EventType,
    subject: EventSubject,
    manager: EntityManager = this.transactions.manager,
  ): Promise<void> {
    await this.publishAll([{ tenantId, type, subject }], manager);
  }

  /** Many events (a batch of tokens, the purge), in one statement. */
  async publishAll(events: VaultEvent[], manager: EntityManager = this.transactions.manager): Promise<void> {
    const part = this.publishPart(events);
    if (part === null) {
      return;
    }
    // Prepared: every token write runs it, and it is a join the database would otherwise plan each time.
    await preparedQuery(manager, part.name, part.text, part.values, this.config.databasePreparedStatements);
  }

  /** The statement publishAll runs, as a part of the caller's own (composeStatement); null for no events. */
  publishPart(events: VaultEvent[]): StatementPart | null {
    if (events.length === 0) {
      return null;
    }
    const now = this.clock.now();
    const createdAt = now.toISOString();
    // Null without traces (nothing is looked up): the statement is then the one without the column.
    const origin = currentTraceparent();
    const traced = origin === null ? [] : [origin];
    if (events.length > 1 && events.every((e) => alike(e, events[0]))) {
      const [{ tenantId, type, subject }] = events;
      const ids = events.map((e) => e.subject.id).join(SEPARATOR);
      return {
        name: origin === null ? 'events.publish-batch' : 'events.publish-batch.traced',
        text: origin === null ? PUBLISH_BATCH : PUBLISH_BATCH_TRACED,
        values: [tenantId, type, ids, subject.type, createdAt, now, ...traced],
      };
    }
    const payloads = events.map((event) => toPayload(event, createdAt));
    const values = [[...new Set(events.map((e) => e.tenantId))], JSON.stringify(payloads), now, ...traced];
    return origin === null
      ? { name: 'events.publish', text: PUBLISH, values }
      : { name: 'events.publish.traced', text: PUBLISH_TRACED, values };
  }
}

/** Whether `event` can go in PUBLISH_BATCH with `first`: same tenant, type and subject type, an id to join. */
function alike(event: VaultEvent, first: VaultEvent): boolean {
  return (
    event.tenantId === first.tenantId &&
    event.type === first.type &&
    event.subject.type !== undefined &&
    event.subject.type === first.subject.type &&
    !event.subject.id.includes(SEPARATOR)
  );
}

function toPayload(event: VaultEvent, createdAt: string): EventPayload {
  const data: EventSubject = { id: event.subject.id };
  if (event.subject.type !== undefined) {
    data.type = event.subject.type;
  }
  return {
    id: randomUUID(),
    type: event.type,
    tenant_id: event.tenantId,
    created_at: createdAt,
    data,
  };
}

/** Makes Events injectable in every module that changes something a webhook may hear about. */
@Global()
@Module({ providers: [Events], exports: [Events] })
export class EventsModule {}
