import { Injectable } from '@nestjs/common';
import type { StatementPart } from '../database/composed-statement';
import { Database } from '../database/database.service';

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

/** Subject ids in PUBLISH_BATCH's $3 are joined by this character. */
export const SUBJECT_SEPARATOR = '\x1f';

/** Events of one tenant, type and subject type, by subject id (see PUBLISH_BATCH). */
export interface EventBatch {
  tenantId: string;
  type: string;
  subjectIds: string[];
  subjectType: string;
  createdAt: string;
}

/**
 * The event outbox: one delivery row per enabled webhook of a tenant that subscribes to an event's type.
 * The statements join `webhooks` to find them; the sender (WebhookSender) claims and settles the rows.
 */
@Injectable()
export class EventsRepository {
  constructor(private readonly db: Database) {}

  /** The deliveries of events given as their JSON payloads (`tenantIds`: the tenants among them). */
  payloadsPart(tenantIds: string[], payloads: string, now: Date, traceparent: string | null): StatementPart {
    const values = [tenantIds, payloads, now];
    return traceparent === null
      ? { name: 'events.publish', text: PUBLISH, values }
      : { name: 'events.publish.traced', text: PUBLISH_TRACED, values: [...values, traceparent] };
  }

  /** The deliveries of a batch of alike events, whose payloads the database writes. */
  batchPart(batch: EventBatch, now: Date, traceparent: string | null): StatementPart {
    const values = [
      batch.tenantId,
      batch.type,
      batch.subjectIds.join(SUBJECT_SEPARATOR),
      batch.subjectType,
      batch.createdAt,
      now,
    ];
    return traceparent === null
      ? { name: 'events.publish-batch', text: PUBLISH_BATCH, values }
      : { name: 'events.publish-batch.traced', text: PUBLISH_BATCH_TRACED, values: [...values, traceparent] };
  }

  /**
   * Writes the deliveries, in the open transaction. Prepared: every token write runs it, and it is a join the
   * database would otherwise plan each time.
   */
  async insert(part: StatementPart): Promise<void> {
    await this.db.prepared(part.name, part.text, part.values);
  }
}
