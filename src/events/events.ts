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

const PUBLISH = `INSERT INTO webhook_deliveries
    (tenant_id, id, webhook_id, event_id, event_type, payload, status, attempts, next_attempt_at, created_at)
  SELECT w.tenant_id, gen_random_uuid(), w.id, e.event_id, e.event_type, e.payload, 'pending', 0, $5, $5
    FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[]) AS e(tenant_id, event_id, event_type, payload)
    JOIN webhooks w ON w.tenant_id = e.tenant_id AND w.status = 'enabled' AND e.event_type = ANY (w.events)`;

/** With traces on: each delivery also keeps the publishing span's `traceparent`, to link its own span to. */
const PUBLISH_TRACED = `INSERT INTO webhook_deliveries
    (tenant_id, id, webhook_id, event_id, event_type, payload, status, attempts, next_attempt_at, created_at,
     traceparent)
  SELECT w.tenant_id, gen_random_uuid(), w.id, e.event_id, e.event_type, e.payload, 'pending', 0, $5, $5, $6
    FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[]) AS e(tenant_id, event_id, event_type, payload)
    JOIN webhooks w ON w.tenant_id = e.tenant_id AND w.status = 'enabled' AND e.event_type = ANY (w.events)`;

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
    const payloads = events.map((event) => toPayload(event, now));
    const values = [
      events.map((e) => e.tenantId),
      payloads.map((p) => p.id),
      payloads.map((p) => p.type),
      payloads.map((p) => JSON.stringify(p)),
      now,
    ];
    // Null without traces (nothing is looked up): the statement is then the one without the column.
    const origin = currentTraceparent();
    return origin === null
      ? { name: 'events.publish', text: PUBLISH, values }
      : { name: 'events.publish.traced', text: PUBLISH_TRACED, values: [...values, origin] };
  }
}

function toPayload(event: VaultEvent, now: Date): EventPayload {
  const data: EventSubject = { id: event.subject.id };
  if (event.subject.type !== undefined) {
    data.type = event.subject.type;
  }
  return {
    id: randomUUID(),
    type: event.type,
    tenant_id: event.tenantId,
    created_at: now.toISOString(),
    data,
  };
}

/** Makes Events injectable in every module that changes something a webhook may hear about. */
@Global()
@Module({ providers: [Events], exports: [Events] })
export class EventsModule {}
