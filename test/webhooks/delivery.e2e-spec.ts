import type { ServerResponse } from 'node:http';
import { MetricsService } from '../../src/metrics/metrics.service';
import { Clock } from '../../src/common/clock';
import { DISABLE_AFTER_FAILURES, WebhookSender } from '../../src/webhooks/webhook-sender';
import { recordsOf } from '../support/audit';
import { decodeQuotedPrintable, smtpEnv, startSmtpServer, TestSmtpServer } from '../support/mail';
import { proxyFixture, ProxyFixture } from '../support/proxy-fixture';
import type { TestTenant } from '../support/test-app';
import { TestClock } from '../support/test-clock';
import { tokenApp } from '../support/token-factory';
import {
  createWebhook,
  deliveryRows,
  secondSender,
  webhookReceiver,
  WebhookReceiver,
} from '../support/webhook-receiver';

/** Issue 15 item 6: at least once across a restart, exactly once across replicas, retries, disabling. */
describe('webhook deliveries', () => {
  let fx: ProxyFixture;
  let clock: TestClock;
  let receiver: WebhookReceiver;
  let smtp: TestSmtpServer;

  beforeAll(async () => {
    clock = new TestClock();
    smtp = await startSmtpServer();
    fx = await proxyFixture({ overrides: [{ provide: Clock, useValue: clock }], env: smtpEnv(smtp) });
    receiver = await webhookReceiver(fx);
  });
  afterAll(async () => {
    await fx.close();
    await smtp.close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answer = 200;
    clock.reset();
  });

  const sender = (): WebhookSender => fx.ctx.get(WebhookSender);
  const restartEnv = (jobs: boolean): Record<string, string> => ({
    PROXY_ALLOW_LOOPBACK: 'true',
    PROXY_CA_FILE: fx.ca.file,
    SANDBOX_WORKERS: '1',
    JOBS_ENABLED: String(jobs),
    ...smtpEnv(smtp),
  });

  async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
    for (const end = Date.now() + ms; Date.now() < end;) {
      if (await check()) {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  async function tenantWithHook(
    name: string,
  ): Promise<{ tenant: TestTenant; create: (n: number) => Promise<void> }> {
    const tenant = await fx.ctx.newTenant(name);
    await createWebhook(fx.ctx, tenant, receiver.url, ['token.created']);
    const app = await tokenApp(fx.ctx, tenant);
    return {
      tenant,
      create: async (n) => {
        for (let i = 0; i < n; i++) {
          await app.api.create({ type: 'token', data: `value ${i}` }).expect(201);
        }
      },
    };
  }

  it('delivers after a restart what was written before the vault stopped', async () => {
    const { tenant, create } = await tenantWithHook('Restart');
    await create(2);
    expect(receiver.received).toHaveLength(0);
    await fx.ctx.restart(restartEnv(true));
    await until('two deliveries', () => receiver.received.length >= 2);
    await until('rows settled', async () =>
      (await deliveryRows(fx.ctx, tenant.tenantId)).every((r) => r.status === 'delivered'),
    );
    expect(receiver.received).toHaveLength(2);
    await fx.ctx.restart(restartEnv(false));
  });

  it('delivers again after a restart an event whose sender stopped while the receiver had not answered', async () => {
    const { tenant, create } = await tenantWithHook('Killed');
    const held: ServerResponse[] = [];
    receiver.server.server.prependOnceListener('request', (_req, res: ServerResponse) => {
      // The first request is never answered: the vault goes down while it waits.
      res.writeHead = () => res;
      res.end = () => res;
      held.push(res);
    });
    await create(1);
    const first = sender().deliverDue();
    await until('the first attempt', () => receiver.received.length === 1);
    await fx.ctx.restart(restartEnv(false));
    await first.catch(() => undefined);
    held.forEach((res) => res.socket?.destroy());
    // Past the lease of the claim and the retry's backoff.
    clock.advance(5 * 60_000);
    expect(await sender().deliverDue()).toBe(1);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1].headers['x-webhook-id']).toBe(receiver.received[0].headers['x-webhook-id']);
    expect((await deliveryRows(fx.ctx, tenant.tenantId)).map((r) => r.status)).toEqual(['delivered']);
  });

  it('retries a failed delivery with backoff, resets the failure count on success', async () => {
    const { tenant, create } = await tenantWithHook('Retry');
    receiver.answer = 500;
    await create(1);
    expect(await sender().deliverDue()).toBe(1);
    let [row] = await deliveryRows(fx.ctx, tenant.tenantId);
    // Without traces nothing of a trace is written (the link of a traced delivery: test/tracing).
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_error: 'HTTP_500', traceparent: null });
    expect(receiver.received[0].headers.traceparent).toBeUndefined();
    expect(await sender().deliverDue()).toBe(0);
    clock.advance(60_000);
    expect(await sender().deliverDue()).toBe(1);
    receiver.answer = 204;
    clock.advance(2 * 60_000);
    expect(await sender().deliverDue()).toBe(1);
    [row] = await deliveryRows(fx.ctx, tenant.tenantId);
    expect(row).toMatchObject({ status: 'delivered', attempts: 3 });
    const [hook] = await fx.ctx.dataSource.query<{ consecutive_failures: number }[]>(
      'SELECT consecutive_failures FROM webhooks WHERE tenant_id = $1',
      [tenant.tenantId],
    );
    expect(hook.consecutive_failures).toBe(0);
  });

  it('disables a webhook after a sustained run of failures, drops its pending events, and enables it on update', async () => {
    const { tenant, create } = await tenantWithHook('Disable');
    const [hook] = (await fx.ctx.http.get('/webhooks').set('BT-API-KEY', tenant.key)).body.data as {
      id: string;
    }[];
    const notify = await fx.ctx.http
      .put(`/webhooks/${hook.id}`)
      .set('BT-API-KEY', tenant.key)
      .send({
        name: 'Orders',
        url: receiver.url,
        events: ['token.created'],
        notify_email: 'ops@example.com',
      });
    expect(notify.status).toBe(200);
    receiver.answer = 503;
    await create(3);
    for (let i = 0; i < DISABLE_AFTER_FAILURES; i++) {
      await sender().deliverDue();
      clock.advance(2 * 3_600_000);
    }
    const list = await fx.ctx.http.get('/webhooks').set('BT-API-KEY', tenant.key);
    const webhook = (list.body.data as Record<string, unknown>[])[0];
    expect(webhook.status).toBe('disabled');
    // The owner is told once, through the mail server, without the URL; the vault audits the change.
    expect(smtp.received.map((m) => m.to)).toEqual([['ops@example.com']]);
    const mail = decodeQuotedPrintable(smtp.received[0].raw);
    expect(mail).toContain('Subject: Webhook disabled: Orders');
    expect(mail).toContain(`(${hook.id}) was disabled`);
    expect(mail).toContain('HTTP_503');
    expect(mail).not.toContain(receiver.url);
    const disabled = await recordsOf(fx.ctx, tenant.tenantId, 'disable', hook.id);
    expect(disabled).toEqual([expect.objectContaining({ actor_type: 'system', entity_type: 'webhook' })]);
    const rows = await deliveryRows(fx.ctx, tenant.tenantId);
    expect(rows.every((r) => r.status === 'failed')).toBe(true);
    // A disabled webhook gets no new events.
    await create(1);
    expect(await deliveryRows(fx.ctx, tenant.tenantId)).toHaveLength(rows.length);
    receiver.answer = 200;
    const updated = await fx.ctx.http
      .put(`/webhooks/${webhook.id as string}`)
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'again', url: receiver.url, events: ['token.created'] });
    expect([updated.status, updated.body.status]).toEqual([200, 'enabled']);
    await create(1);
    expect(await sender().deliverDue()).toBe(1);
    const metrics = await fx.ctx.get(MetricsService).registry.metrics();
    expect(metrics).toMatch(/token_vault_webhook_deliveries_total\{outcome="disabled"\} 1/);
    expect(metrics).toMatch(/token_vault_webhook_deliveries_total\{outcome="retry"\} \d+/);
    expect(metrics).toMatch(/token_vault_webhook_deliveries_total\{outcome="delivered"\} \d+/);
  });

  it('two senders looking at once deliver every event exactly once', async () => {
    const { tenant, create } = await tenantWithHook('Twice');
    await create(45);
    const second = await secondSender(fx);
    try {
      const attempted = await Promise.all([
        sender().deliverDue(),
        second.sender.deliverDue(),
        sender().deliverDue(),
      ]);
      expect(attempted.reduce((a, b) => a + b, 0)).toBe(45);
    } finally {
      await second.close();
    }
    const ids = receiver.received.map((d) => d.headers['x-webhook-id']);
    expect(ids).toHaveLength(45);
    expect(new Set(ids).size).toBe(45);
    expect((await deliveryRows(fx.ctx, tenant.tenantId)).every((r) => r.status === 'delivered')).toBe(true);
  });
});
