import { Global, Injectable, Module } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import type { StatementPart } from '../database/composed-statement';
import { currentTraceparent } from '../tracing/spans';
import { EventSubject, EventType, VaultEvent } from './event-types';
import { EventsRepository, SUBJECT_SEPARATOR } from './events.repository';

/** The JSON body a webhook receives (also what its signature covers). */
export interface EventPayload {
  id: string;
  type: EventType;
  tenant_id: string;
  created_at: string;
  data: EventSubject;
}

/**
 * Publishes events to the webhook outbox. Call it inside the transaction of the change (`db.transaction`):
 * one statement writes one delivery row per enabled webhook of the tenant that subscribes to the event type,
 * so the change and its deliveries commit or roll back together, and a tenant without webhooks costs one
 * indexed look-up that finds nothing.
 */
@Injectable()
export class Events {
  constructor(
    private readonly outbox: EventsRepository,
    private readonly clock: Clock,
  ) {}

  /** One event about `subject` in `tenantId`, in the open transaction if any. */
  async publish(tenantId: string, type: EventType, subject: EventSubject): Promise<void> {
    await this.publishAll([{ tenantId, type, subject }]);
  }

  /** Many events (a batch of tokens, the purge), in one statement. */
  async publishAll(events: VaultEvent[]): Promise<void> {
    const part = this.publishPart(events);
    if (part !== null) {
      await this.outbox.insert(part);
    }
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
    if (events.length > 1 && events.every((e) => alike(e, events[0]))) {
      const [{ tenantId, type, subject }] = events;
      const subjectIds = events.map((e) => e.subject.id);
      const batch = { tenantId, type, subjectIds, subjectType: subject.type as string, createdAt };
      return this.outbox.batchPart(batch, now, origin);
    }
    const payloads = events.map((event) => toPayload(event, createdAt));
    const tenantIds = [...new Set(events.map((e) => e.tenantId))];
    return this.outbox.payloadsPart(tenantIds, JSON.stringify(payloads), now, origin);
  }
}

/** Whether `event` can go in one batch with `first`: same tenant, type and subject type, an id to join. */
function alike(event: VaultEvent, first: VaultEvent): boolean {
  return (
    event.tenantId === first.tenantId &&
    event.type === first.type &&
    event.subject.type !== undefined &&
    event.subject.type === first.subject.type &&
    !event.subject.id.includes(SUBJECT_SEPARATOR)
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
@Module({ providers: [Events, EventsRepository], exports: [Events] })
export class EventsModule {}
