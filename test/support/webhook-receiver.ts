import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { createApp } from '../../src/app';
import { OUTBOUND_RESOLVER } from '../../src/outbound';
import { WebhookSender } from '../../src/webhooks/webhook-sender';
import { staticResolver, TEST_HOST } from './outbound';
import { overridingFactory } from './overrides';
import type { TestContext, TestTenant } from './test-app';
import type { ProxyFixture } from './proxy-fixture';
import type { TestHttpsServer } from './https-test-server';

export interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTPS receiver on 127.0.0.1 (through the proxy fixture's CA and names) that records what it gets. */
export interface WebhookReceiver {
  server: TestHttpsServer;
  url: string;
  received: Delivery[];
  /** What the receiver answers from now on (default 200). */
  answer: number;
}

export async function webhookReceiver(fx: ProxyFixture, path = '/hook'): Promise<WebhookReceiver> {
  const receiver = { received: [] as Delivery[], answer: 200 } as WebhookReceiver;
  receiver.server = await fx.server((req, res, body) => {
    receiver.received.push({ headers: req.headers, body: body.toString('utf8') });
    res.writeHead(receiver.answer, { 'content-type': 'text/plain' });
    res.end('ok');
  });
  receiver.url = fx.url(receiver.server, path);
  return receiver;
}

/** Verifies X-Webhook-Signature as the README tells receivers to (timestamp within five minutes). */
export function signatureValid(
  secret: string,
  header: string | undefined,
  body: string,
  nowMs = Date.now(),
): boolean {
  const parts = Object.fromEntries((header ?? '').split(',').map((kv) => kv.split('=', 2)));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowMs / 1000 - t) > 300 || typeof parts.v1 !== 'string') {
    return false;
  }
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** POST /webhooks with the tenant's management key; fails the test unless created. */
export async function createWebhook(
  ctx: TestContext,
  tenant: TestTenant,
  url: string,
  events: string[] = ['token.created', 'token.updated', 'token.deleted', 'token.expired'],
): Promise<{ id: string; secret: string }> {
  const res = await ctx.http
    .post('/webhooks')
    .set('BT-API-KEY', tenant.key)
    .send({ name: 'Test webhook', url, events });
  expect([res.status, res.body]).toEqual([201, expect.objectContaining({ secret: expect.any(String) })]);
  return { id: res.body.id as string, secret: res.body.secret as string };
}

/** The outbox rows of the tenant, oldest first. */
export async function deliveryRows(
  ctx: TestContext,
  tenantId: string,
): Promise<
  {
    event_type: string;
    status: string;
    attempts: number;
    payload: string;
    last_error: string | null;
    traceparent: string | null;
  }[]
> {
  return ctx.dataSource.query(
    `SELECT event_type, status, attempts, payload, last_error, traceparent FROM webhook_deliveries
      WHERE tenant_id = $1 ORDER BY created_at, event_type`,
    [tenantId],
  );
}

/**
 * Another sender for the fixture's database: on PostgreSQL a second replica (closed by `close`); the embedded
 * database belongs to one process, so there the fixture's own sender (two looks of one).
 */
export async function secondSender(
  fx: ProxyFixture,
): Promise<{ sender: WebhookSender; close(): Promise<void> }> {
  if (!process.env.DATABASE_URL) {
    return { sender: fx.ctx.get(WebhookSender), close: () => Promise.resolve() };
  }
  const other = await createApp(fx.ctx.config, {
    database: fx.ctx.database,
    docs: false,
    nestFactory: overridingFactory([
      { provide: OUTBOUND_RESOLVER, useValue: staticResolver({ [TEST_HOST]: '127.0.0.1' }) },
    ]),
  });
  return { sender: other.app.get(WebhookSender), close: () => other.close() };
}
