import { BasisTheoryClient } from '@basis-theory/node-sdk';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import type { Server } from 'node:http';
import { PurgeService } from '../../src/jobs/purge.service';
import { WebhookSender } from '../../src/webhooks/webhook-sender';
import { proxyFixture, ProxyFixture } from '../support/proxy-fixture';
import type { TestTenant } from '../support/test-app';
import { cardData, tokenApp } from '../support/token-factory';
import {
  createWebhook,
  deliveryRows,
  signatureValid,
  webhookReceiver,
  WebhookReceiver,
} from '../support/webhook-receiver';

/** Issue 15 item 6: /webhooks, and signed deliveries of token events from the outbox. */
describe('webhooks', () => {
  let fx: ProxyFixture;
  let tenant: TestTenant;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    fx = await proxyFixture();
    tenant = await fx.ctx.newTenant();
    receiver = await webhookReceiver(fx);
  });
  afterAll(async () => {
    await fx.close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answer = 200;
  });

  const deliver = (): Promise<number> => fx.ctx.get(WebhookSender).deliverDue();

  describe('through @basis-theory/node-sdk', () => {
    let client: BasisTheoryClient;
    let server: Server;

    beforeAll(async () => {
      server = fx.ctx.vault.app.getHttpServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      client = new BasisTheoryClient({ apiKey: tenant.key, baseUrl: `http://127.0.0.1:${port}` });
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('lists the event types, then creates, gets, lists, updates and deletes a webhook', async () => {
      const types = await client.webhooks.events.list();
      expect(types).toEqual(
        expect.arrayContaining(['token.created', 'token.expired', 'tenant.member.deleted']),
      );

      const created = await client.webhooks.create({
        name: 'sdk',
        url: receiver.url,
        events: ['token.created'],
      });
      expect(created).toMatchObject({
        name: 'sdk',
        url: receiver.url,
        status: 'enabled',
        events: ['token.created'],
      });
      expect((created as unknown as { secret: string }).secret).toMatch(/^whsec_[1-9A-HJ-NP-Za-km-z]{44}$/);

      const got = await client.webhooks.get(created.id);
      expect(got).toMatchObject({ id: created.id, tenantId: tenant.tenantId, status: 'enabled' });
      expect(got).not.toHaveProperty('secret');

      const list = await client.webhooks.list();
      expect(list.data.map((w) => w.id)).toContain(created.id);

      const updated = await client.webhooks.update(created.id, {
        name: 'sdk 2',
        url: receiver.url,
        events: ['token.created', 'token.deleted'],
      });
      expect(updated).toMatchObject({ name: 'sdk 2', events: ['token.created', 'token.deleted'] });
      expect(updated.modifiedAt).toBeInstanceOf(Date);

      await client.webhooks.delete(created.id);
      await expect(client.webhooks.get(created.id)).rejects.toMatchObject({ statusCode: 404 });
    });
  });

  describe('validation and access', () => {
    const post = (body: object, key = tenant.key) =>
      fx.ctx.http.post('/webhooks').set('BT-API-KEY', key).send(body);

    it.each([
      ['http://hooks.example.com/x', 'url'],
      ['https://127.0.0.1/x', 'url'],
      ['https://user:pw@hooks.example.com/x', 'url'],
      ['https://metadata.internal/x', 'url'],
    ])('refuses the destination %s with 400', async (url, field) => {
      const res = await post({ name: 'bad', url, events: ['token.created'] });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.errors as object)).toEqual([field]);
    });

    it('refuses unknown, empty and repeated event lists with 400', async () => {
      for (const events of [['token.read'], [], ['token.created', 'token.created'], 'token.created']) {
        const res = await post({ name: 'bad', url: receiver.url, events });
        expect([res.status, Object.keys(res.body.errors as object)]).toEqual([400, ['events']]);
      }
    });

    it('needs the webhook permissions (a management permission) and keeps tenants apart', async () => {
      const reader = await fx.ctx.newApplication(tenant, 'management', ['webhook:read']);
      expect(
        (await post({ name: 'x', url: receiver.url, events: ['token.created'] }, reader.key)).status,
      ).toBe(403);
      const hook = await createWebhook(fx.ctx, tenant, receiver.url);
      expect((await fx.ctx.http.get(`/webhooks/${hook.id}`).set('BT-API-KEY', reader.key)).status).toBe(200);
      const other = await fx.ctx.newTenant('Other');
      for (const call of [
        fx.ctx.http.get(`/webhooks/${hook.id}`),
        fx.ctx.http.delete(`/webhooks/${hook.id}`),
        fx.ctx.http
          .put(`/webhooks/${hook.id}`)
          .send({ name: 'x', url: receiver.url, events: ['token.created'] }),
      ]) {
        expect((await call.set('BT-API-KEY', other.key)).status).toBe(404);
      }
      expect((await fx.ctx.http.get('/webhooks').set('BT-API-KEY', other.key)).body.data).toEqual([]);
      expect((await fx.ctx.http.delete(`/webhooks/${hook.id}`).set('BT-API-KEY', tenant.key)).status).toBe(
        204,
      );
    });
  });

  describe('token events', () => {
    it('delivers created, updated and deleted, signed, with ids and timestamps and no token data', async () => {
      const own = await fx.ctx.newTenant('Events');
      const hook = await createWebhook(fx.ctx, own, receiver.url);
      const app = await tokenApp(fx.ctx, own);
      const card = cardData();
      const created = await app.api
        .create({ type: 'card', data: card, metadata: { note: 'secret note' } })
        .expect(201);
      const id = created.body.id as string;
      await app.api.patch(id, { data: { ...card, expiration_month: 1 } }).expect(200);
      await app.api.delete(id).expect(204);

      expect(await deliver()).toBe(3);
      expect(receiver.received).toHaveLength(3);
      const bodies = receiver.received.map((d) => JSON.parse(d.body) as Record<string, unknown>);
      expect(bodies.map((b) => b.type).sort()).toEqual(['token.created', 'token.deleted', 'token.updated']);
      for (const [i, delivery] of receiver.received.entries()) {
        expect(
          signatureValid(hook.secret, delivery.headers['x-webhook-signature'] as string, delivery.body),
        ).toBe(true);
        expect(
          signatureValid('whsec_wrong', delivery.headers['x-webhook-signature'] as string, delivery.body),
        ).toBe(false);
        expect(delivery.headers['x-webhook-id']).toBe(bodies[i].id);
        expect(delivery.headers['content-type']).toBe('application/json');
        expect(Object.keys(bodies[i]).sort()).toEqual(['created_at', 'data', 'id', 'tenant_id', 'type']);
        expect(bodies[i]).toMatchObject({ tenant_id: own.tenantId, data: { id, type: 'card' } });
        expect(Object.keys(bodies[i].data as object).sort()).toEqual(['id', 'type']);
        expect(delivery.body).not.toContain(card.number);
        expect(delivery.body).not.toContain(card.number.slice(-4) + '"');
        expect(delivery.body).not.toContain('secret note');
      }
      expect((await deliveryRows(fx.ctx, own.tenantId)).map((r) => r.status)).toEqual([
        'delivered',
        'delivered',
        'delivered',
      ]);
      expect(await deliver()).toBe(0);
    });

    it("verifies with the guide's Node snippet (docs/guide.md)", async () => {
      const guide = readFileSync(join(__dirname, '../../docs/guide.md'), 'utf8');
      const section = guide.slice(guide.indexOf('## Webhooks'));
      const snippet = /```js\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
      // The verification function, without the example server that follows it.
      const code = snippet.slice(0, snippet.indexOf('// A receiver'));
      const verifyWebhook = runInNewContext(`${code}\nverifyWebhook;`, { require, Buffer }) as (
        secret: string,
        header: unknown,
        body: string,
      ) => boolean;
      const own = await fx.ctx.newTenant('Readme');
      const hook = await createWebhook(fx.ctx, own, receiver.url, ['token.created']);
      await (await tokenApp(fx.ctx, own)).api.create({ type: 'token', data: 'x' }).expect(201);
      expect(await deliver()).toBe(1);
      const [delivery] = receiver.received;
      const header = delivery.headers['x-webhook-signature'];
      expect(verifyWebhook(hook.secret, header, delivery.body)).toBe(true);
      expect(
        verifyWebhook(hook.secret, header, delivery.body.replace('token.created', 'token.deleted')),
      ).toBe(false);
      expect(verifyWebhook(`${hook.secret}x`, header, delivery.body)).toBe(false);
    });

    it('delivers token.created for each token of a /tokenize call, and nothing for a rolled-back write', async () => {
      const own = await fx.ctx.newTenant('Tokenize');
      await createWebhook(fx.ctx, own, receiver.url, ['token.created']);
      const app = await tokenApp(fx.ctx, own);
      await app.api.tokenize({ a: 'one', b: 'two' }).expect(200);
      await app.api.create({ id: 'fixed-id', type: 'token', data: 'x' }).expect(201);
      await app.api.create({ id: 'fixed-id', type: 'token', data: 'y' }).expect(409);
      expect((await deliveryRows(fx.ctx, own.tenantId)).map((r) => r.event_type)).toEqual([
        'token.created',
        'token.created',
        'token.created',
      ]);
      expect(await deliver()).toBe(3);
    });

    it('delivers token.expired from the purge, only to webhooks that subscribe to it', async () => {
      const own = await fx.ctx.newTenant('Expiry');
      await createWebhook(fx.ctx, own, receiver.url, ['token.expired']);
      const app = await tokenApp(fx.ctx, own);
      const id = (await app.api.create({ type: 'token', data: 'soon gone' }).expect(201)).body.id as string;
      await fx.ctx.dataSource.query(
        `UPDATE tokens SET expires_at = now() - interval '1 minute' WHERE tenant_id = $1 AND id = $2`,
        [own.tenantId, id],
      );
      await fx.ctx.get(PurgeService).run();
      expect(await deliver()).toBe(1);
      expect(JSON.parse(receiver.received[0].body)).toMatchObject({
        type: 'token.expired',
        data: { id, type: 'token' },
      });
    });
  });
});
