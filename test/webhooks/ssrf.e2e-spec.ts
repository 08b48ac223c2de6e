import { Logger } from '@nestjs/common';
import { WebhookSender } from '../../src/webhooks/webhook-sender';
import { forbiddenConnector } from '../support/outbound';
import { proxyFixture, ProxyFixture } from '../support/proxy-fixture';
import type { TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';
import { createWebhook, deliveryRows } from '../support/webhook-receiver';

/**
 * Webhook destinations go through the proxy's destination guard. Names that resolve to private, link-local,
 * metadata or loopback addresses (loopback not allowed here) are refused at delivery time, decided with an
 * injected resolver and a connector that fails the test if it is ever called: no socket is opened.
 */
describe('webhook deliveries to destinations the guard refuses', () => {
  const names = {
    'metadata.hooks.test': '169.254.169.254',
    'private.hooks.test': '10.1.2.3',
    'loopback.hooks.test': '127.0.0.1',
    'mapped.hooks.test': '::ffff:192.168.0.1',
    'mixed.hooks.test': ['93.184.216.34', '172.16.0.9'],
  };
  const connector = forbiddenConnector();
  let fx: ProxyFixture;
  let tenant: TestTenant;

  beforeAll(async () => {
    fx = await proxyFixture({ allowLoopback: false, connector, names });
    tenant = await fx.ctx.newTenant();
  });
  afterAll(() => fx.close());

  it('accepts the DNS names, refuses every delivery without connecting, and records why', async () => {
    for (const name of Object.keys(names)) {
      await createWebhook(fx.ctx, tenant, `https://${name}/hook`, ['token.created']);
    }
    const app = await tokenApp(fx.ctx, tenant);
    await app.api.create({ type: 'token', data: 'x' }).expect(201);
    expect(await fx.ctx.get(WebhookSender).deliverDue()).toBe(Object.keys(names).length);
    const rows = await deliveryRows(fx.ctx, tenant.tenantId);
    expect(rows).toHaveLength(Object.keys(names).length);
    for (const row of rows) {
      expect(row).toMatchObject({ status: 'pending', attempts: 1, last_error: 'destination_refused' });
    }
    expect(connector).not.toHaveBeenCalled();
  });

  it('logs whether the name did not resolve or resolved to a refused address', async () => {
    const other = await fx.ctx.newTenant('Logged');
    const nowhere = await createWebhook(fx.ctx, other, 'https://nowhere.hooks.test/hook', ['token.created']);
    const internal = await createWebhook(fx.ctx, other, 'https://private.hooks.test/hook', ['token.created']);
    const app = await tokenApp(fx.ctx, other);
    await app.api.create({ type: 'token', data: 'x' }).expect(201);
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      await fx.ctx.get(WebhookSender).deliverDue();
      const reasons = Object.fromEntries(
        warn.mock.calls
          .map(([fields]) => fields as { webhook?: string; cause?: string; reason?: string })
          .filter((fields) => fields.webhook === nowhere.id || fields.webhook === internal.id)
          .map((fields) => [fields.webhook, [fields.cause, fields.reason]]),
      );
      expect(reasons).toEqual({
        [nowhere.id]: ['destination_refused', 'the host name does not resolve (ENOTFOUND)'],
        [internal.id]: ['destination_refused', 'the host name resolves to a refused address (private)'],
      });
    } finally {
      warn.mockRestore();
    }
    expect(connector).not.toHaveBeenCalled();
  });

  it('refuses IP literals, plain HTTP and localhost when the webhook is written', async () => {
    for (const url of [
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/x',
      'https://0x7f000001/x',
      'http://private.hooks.test/x',
      'https://localhost/x',
      'https://metadata.google.internal/x',
    ]) {
      const res = await fx.ctx.http
        .post('/webhooks')
        .set('BT-API-KEY', tenant.key)
        .send({ name: 'bad', url, events: ['token.created'] });
      expect([url, res.status, Object.keys(res.body.errors as object)]).toEqual([url, 400, ['url']]);
    }
    expect(connector).not.toHaveBeenCalled();
  });
});
