import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import { MAX_WEBHOOKS_PER_TENANT } from '../../src/webhooks/webhooks.service';
import { DELIVERY_TIMEOUT_MS, WebhookSender } from '../../src/webhooks/webhook-sender';
import { TEST_HOST } from '../support/outbound';
import { proxyFixture, ProxyFixture } from '../support/proxy-fixture';
import type { TestHttpsServer } from '../support/https-test-server';
import type { TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';
import {
  createWebhook,
  deliveryRows,
  secondSender,
  webhookReceiver,
  WebhookReceiver,
} from '../support/webhook-receiver';

/** An HTTPS receiver that takes each request and never answers; counts the requests it holds at once. */
interface SilentReceiver {
  server: TestHttpsServer;
  url: string;
  holding: number;
  mostHeld: number;
  /** Drops every held request and any later one (the vault's attempts then fail at once). */
  release(): void;
}

/** Issue 37 item 5: one tenant's dead receivers do not stall another's deliveries; the webhook cap holds. */
describe('webhook delivery fairness between tenants', () => {
  let fx: ProxyFixture;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    fx = await proxyFixture();
    receiver = await webhookReceiver(fx);
  });
  afterAll(async () => {
    await fx.close();
  });

  const sender = (): WebhookSender => fx.ctx.get(WebhookSender);

  async function silentReceiver(f: ProxyFixture): Promise<SilentReceiver> {
    const held: ServerResponse[] = [];
    let released = false;
    const state = { holding: 0, mostHeld: 0 } as SilentReceiver;
    state.server = await f.server((req, res) => {
      if (released) {
        res.socket?.destroy();
        return;
      }
      state.holding++;
      state.mostHeld = Math.max(state.mostHeld, state.holding);
      res.on('close', () => state.holding--);
      held.push(res);
    });
    state.url = f.url(state.server, '/hook');
    state.release = () => {
      released = true;
      held.splice(0).forEach((res) => res.socket?.destroy());
    };
    return state;
  }

  async function until(what: string, check: () => boolean, ms: number): Promise<void> {
    for (const end = Date.now() + ms; Date.now() < end;) {
      if (check()) {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  async function createToken(tenant: TestTenant): Promise<void> {
    const app = await tokenApp(fx.ctx, tenant);
    await app.api.create({ type: 'token', data: 'value' }).expect(201);
  }

  it("delivers a tenant's event within a second or so while another tenant's receivers never answer", async () => {
    const silent = await silentReceiver(fx);
    const stalled = await fx.ctx.newTenant('Stalled');
    for (let i = 0; i < MAX_WEBHOOKS_PER_TENANT; i++) {
      await createWebhook(fx.ctx, stalled, silent.url, ['token.created']);
    }
    const other = await fx.ctx.newTenant('Other');
    await createWebhook(fx.ctx, other, receiver.url, ['token.created']);
    await createToken(stalled);
    const look = sender().deliverDue();
    try {
      await until('the stalled tenant to be attempted', () => silent.holding > 0, 10_000);
      const start = Date.now();
      await createToken(other);
      await until('the other tenant to be delivered', () => receiver.received.length === 1, 4_000);
      // Before the change: one batch of 20 of the stalled tenant's deliveries held every sender for 10 s.
      expect(Date.now() - start).toBeLessThan(4_000);
      expect(silent.mostHeld).toBeLessThanOrEqual(fx.ctx.config.webhookTenantConcurrency);
    } finally {
      silent.release();
      await look;
    }
    const rows = await deliveryRows(fx.ctx, stalled.tenantId);
    expect(rows).toHaveLength(MAX_WEBHOOKS_PER_TENANT);
    expect(rows.every((r) => r.status === 'pending' && r.last_error !== null)).toBe(true);
    expect(silent.mostHeld).toBeLessThanOrEqual(fx.ctx.config.webhookTenantConcurrency);
  });

  it('holds a tenant to its share of deliveries in flight over two senders', async () => {
    const cap = fx.ctx.config.webhookTenantConcurrency;
    const silent = await silentReceiver(fx);
    const tenant = await fx.ctx.newTenant('Greedy');
    for (let i = 0; i < cap * 2 + 2; i++) {
      await createWebhook(fx.ctx, tenant, silent.url, ['token.created']);
    }
    await createToken(tenant);
    const second = await secondSender(fx);
    const looks = [sender().deliverDue(), second.sender.deliverDue()];
    try {
      await until('the share to be taken', () => silent.holding >= cap, 10_000);
      // Both senders claim again at least once meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(silent.mostHeld).toBe(cap);
    } finally {
      silent.release();
      await Promise.all(looks);
      await second.close();
    }
  });

  it('gives up an attempt after DELIVERY_TIMEOUT_MS, whether the TLS handshake or the answer never comes', async () => {
    // Accepts the TCP connection and never says a word: the handshake never completes.
    const silent = await silentReceiver(fx);
    const sockets: Socket[] = [];
    const mute: Server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    try {
      const tenant = await fx.ctx.newTenant('Slow');
      const { port } = mute.address() as AddressInfo;
      await createWebhook(fx.ctx, tenant, `https://${TEST_HOST}:${port}/hook`, ['token.created']);
      await createWebhook(fx.ctx, tenant, silent.url, ['token.created']);
      await createToken(tenant);
      const start = Date.now();
      expect(await sender().deliverDue()).toBe(2);
      const elapsed = Date.now() - start;
      expect(elapsed).toBeGreaterThanOrEqual(DELIVERY_TIMEOUT_MS - 100);
      // A few seconds: before the change, 10 s.
      expect(elapsed).toBeLessThan(8_000);
      expect((await deliveryRows(fx.ctx, tenant.tenantId)).map((r) => r.last_error)).toEqual([
        'timeout',
        'timeout',
      ]);
      expect(sockets.length).toBe(1);
    } finally {
      sockets.forEach((s) => s.destroy());
      await new Promise((resolve) => mute.close(resolve));
      silent.release();
    }
  });

  it(`ends ${MAX_WEBHOOKS_PER_TENANT} webhooks out of 80 concurrent creates, the rest refused with 422`, async () => {
    const tenant = await fx.ctx.newTenant('Racing');
    const answers = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        fx.ctx.http
          .post('/webhooks')
          .set('BT-API-KEY', tenant.key)
          .send({ name: `Hook ${i}`, url: receiver.url, events: ['token.created'] })
          .then((res) => res.status),
      ),
    );
    expect(answers.filter((s) => s === 201)).toHaveLength(MAX_WEBHOOKS_PER_TENANT);
    expect(answers.filter((s) => s === 422)).toHaveLength(80 - MAX_WEBHOOKS_PER_TENANT);
    const [{ count }] = await fx.ctx.dataSource.query<{ count: number }[]>(
      'SELECT count(*)::int AS count FROM webhooks WHERE tenant_id = $1',
      [tenant.tenantId],
    );
    expect(count).toBe(MAX_WEBHOOKS_PER_TENANT);
  });
});
