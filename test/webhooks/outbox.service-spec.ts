import { randomUUID } from 'node:crypto';
import { Clock } from '../../src/common/clock';
import { Database } from '../../src/database/database.service';
import { Events } from '../../src/events/events';
import { EventsRepository } from '../../src/events/events.repository';
import { WebhookDeliveriesRepository } from '../../src/webhooks/webhook-deliveries.repository';
import { WebhooksRepository } from '../../src/webhooks/webhooks.repository';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';

interface DeliveryRow {
  webhook_id: string;
  event_type: string;
  payload: string;
  status: string;
}

/** The event outbox and a webhook's run of failures, on the test run's database without the application. */
describe('the webhook outbox', () => {
  let db: TestDataSource;
  let data: Database;
  let events: Events;
  let webhooks: WebhooksRepository;
  let deliveries: WebhookDeliveriesRepository;
  let tenantId: string;

  beforeAll(async () => {
    db = await openTestDataSource();
    data = db.dataLayer;
    const clock = new Clock();
    events = new Events(new EventsRepository(data), clock);
    webhooks = new WebhooksRepository(data);
    deliveries = new WebhookDeliveriesRepository(data, clock);
    tenantId = await db.insertTenant();
  });

  afterAll(() => db.close());

  beforeEach(() => db.dataSource.query('DELETE FROM webhooks'));

  async function newWebhook(types: string[], status = 'enabled'): Promise<string> {
    const id = randomUUID();
    await webhooks.insert({
      tenantId,
      id,
      name: 'receiver',
      url: 'https://receiver.example/hook',
      events: types,
      status: status as 'enabled',
      secret: Buffer.from('sealed'),
      consecutiveFailures: 0,
    });
    return id;
  }

  const outbox = (): Promise<DeliveryRow[]> =>
    data.query<DeliveryRow>(
      'SELECT webhook_id, event_type, payload, status FROM webhook_deliveries WHERE tenant_id = $1 ORDER BY payload',
      [tenantId],
    );

  it('writes one delivery per enabled webhook that subscribes to the type, with the payload it signs', async () => {
    const hearing = await newWebhook(['reactor.created', 'proxy.created']);
    await newWebhook(['proxy.created']);
    await newWebhook(['reactor.created'], 'disabled');
    const reactorId = randomUUID();
    await events.publish(tenantId, 'reactor.created', { id: reactorId });
    const rows = await outbox();
    expect(rows).toEqual([
      { webhook_id: hearing, event_type: 'reactor.created', payload: expect.any(String), status: 'pending' },
    ]);
    expect(JSON.parse(rows[0].payload)).toEqual({
      id: expect.any(String),
      type: 'reactor.created',
      tenant_id: tenantId,
      created_at: expect.any(String),
      data: { id: reactorId },
    });
  });

  it('writes a batch of alike events with payloads of the same shape, one event id per event', async () => {
    const a = await newWebhook(['token.created']);
    const b = await newWebhook(['token.created']);
    const ids = [randomUUID(), randomUUID()];
    await events.publishAll(
      ids.map((id) => ({ tenantId, type: 'token.created', subject: { id, type: 'card' } })),
    );
    const rows = await outbox();
    expect(rows.map((r) => r.webhook_id).sort()).toEqual([a, a, b, b].sort());
    const payloads = rows.map((r) => JSON.parse(r.payload) as { id: string; data: unknown });
    expect(new Set(payloads.map((p) => p.id)).size).toBe(2);
    expect(payloads.map((p) => p.data)).toEqual(
      expect.arrayContaining(ids.map((id) => ({ id, type: 'card' }))),
    );
  });

  it('commits its deliveries with the change, in the open transaction', async () => {
    await newWebhook(['proxy.deleted']);
    await expect(
      data.transaction(async () => {
        await events.publish(tenantId, 'proxy.deleted', { id: randomUUID() });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await outbox()).toEqual([]);
    await data.transaction(() => events.publish(tenantId, 'proxy.deleted', { id: randomUUID() }));
    expect(await outbox()).toHaveLength(1);
  });

  it('disables a webhook after a sustained run of failures, and its queued deliveries are given up', async () => {
    const id = await newWebhook(['reactor.deleted']);
    await events.publish(tenantId, 'reactor.deleted', { id: randomUUID() });
    const start = new Date('2026-01-01T00:00:00Z');
    const later = new Date('2026-01-01T02:00:00Z');
    expect(await webhooks.countFailure(tenantId, id, start, 3, start)).toBe(false);
    await webhooks.resetFailures(tenantId, id);
    expect(await webhooks.countFailure(tenantId, id, start, 3, start)).toBe(false);
    expect(await webhooks.countFailure(tenantId, id, start, 3, start)).toBe(false);
    // Three in a row, but the run started after `startedBy`: not yet.
    expect(await webhooks.countFailure(tenantId, id, later, 3, new Date(start.getTime() - 1))).toBe(false);
    await data.transaction(async () => {
      expect(await webhooks.countFailure(tenantId, id, later, 3, start)).toBe(true);
      await deliveries.giveUpForWebhook(tenantId, id, 'WEBHOOK_DISABLED');
    });
    expect((await webhooks.find(tenantId, id))?.status).toBe('disabled');
    expect((await outbox()).map((r) => r.status)).toEqual(['failed']);
    expect(await webhooks.countFailure(tenantId, id, later, 3, start)).toBe(false);
  });
});
