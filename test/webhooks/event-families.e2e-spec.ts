import { EVENT_TYPES } from '../../src/events/event-types';
import { Mailer } from '../../src/mail/mailer';
import { WebhookSender } from '../../src/webhooks/webhook-sender';
import { CapturingMailer, secretOf } from '../support/mail';
import { createProxy, proxyFixture, ProxyFixture } from '../support/proxy-fixture';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import type { TestTenant } from '../support/test-app';
import { createWebhook, deliveryRows, webhookReceiver, WebhookReceiver } from '../support/webhook-receiver';

/** Issue 15 item 6: application, reactor, proxy, member and invitation changes are events too. */
describe('webhook events of management changes', () => {
  const mailer = new CapturingMailer();
  let fx: ProxyFixture;
  let receiver: WebhookReceiver;
  let tenant: TestTenant;

  beforeAll(async () => {
    fx = await proxyFixture({ overrides: [{ provide: Mailer, useValue: mailer }] });
    receiver = await webhookReceiver(fx);
    tenant = await fx.ctx.newTenant();
    await createWebhook(
      fx.ctx,
      tenant,
      receiver.url,
      EVENT_TYPES.filter((t) => !t.startsWith('token.')),
    );
  });
  afterAll(() => fx.close());

  const http = () => fx.ctx.http;
  const events = async (): Promise<{ type: string; id: string }[]> => {
    const rows = await deliveryRows(fx.ctx, tenant.tenantId);
    await fx.ctx.dataSource.query('DELETE FROM webhook_deliveries WHERE tenant_id = $1', [tenant.tenantId]);
    return rows.map((r) => {
      const payload = JSON.parse(r.payload) as { type: string; data: { id: string } };
      expect(payload.type).toBe(r.event_type);
      return { type: payload.type, id: payload.data.id };
    });
  };

  it('applications: created, updated, key regenerated, deleted', async () => {
    const created = await http()
      .post('/applications')
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'App', type: 'private', permissions: ['token:read'] })
      .expect(201);
    const id = created.body.id as string;
    await http()
      .put(`/applications/${id}`)
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'App 2', permissions: ['token:read'] })
      .expect(200);
    await http().post(`/applications/${id}/regenerate`).set('BT-API-KEY', tenant.key).expect(200);
    await http().delete(`/applications/${id}`).set('BT-API-KEY', tenant.key).expect(204);
    expect(await events()).toEqual(
      [
        'application.created',
        'application.updated',
        'application.key.regenerated',
        'application.deleted',
      ].map((type) => ({ type, id })),
    );
  });

  it('reactors: created, updated, deleted', async () => {
    const { reactorId } = await newReactor(fx.ctx, tenant);
    const api = reactorsApi(fx.ctx, tenant);
    await api.update(reactorId, { name: 'Renamed', configuration: { currency: 'EUR' } }).expect(200);
    await api.delete(reactorId).expect(204);
    expect(await events()).toEqual(
      ['reactor.created', 'reactor.updated', 'reactor.deleted'].map((type) => ({ type, id: reactorId })),
    );
  });

  it('proxies: created, updated, deleted', async () => {
    const { id } = await createProxy(fx.ctx, tenant, { destination_url: 'https://api.example.com/v1' });
    await http()
      .put(`/proxies/${id}`)
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'Renamed', destination_url: 'https://api.example.com/v2' })
      .expect(200);
    await http().delete(`/proxies/${id}`).set('BT-API-KEY', tenant.key).expect(204);
    expect(await events()).toEqual(
      ['proxy.created', 'proxy.updated', 'proxy.deleted'].map((type) => ({ type, id })),
    );
  });

  it('invitations and members: created, resent, member created by accepting, role updated, member deleted, invitation deleted', async () => {
    const invite = (email: string) =>
      http().post('/tenants/self/invitations').set('BT-API-KEY', tenant.key).send({ email }).expect(201);
    const first = (await invite('new.member@example.com')).body.id as string;
    await http().post(`/tenants/self/invitations/${first}/resend`).set('BT-API-KEY', tenant.key).expect(200);
    const token = secretOf(mailer.sent[mailer.sent.length - 1].text);
    const accepted = await http()
      .post('/invitations/accept')
      .send({ token, first_name: 'New', last_name: 'Member' })
      .expect(200);
    const memberId = (accepted.body.member as { id: string }).id;
    await http()
      .put(`/tenants/self/members/${memberId}`)
      .set('BT-API-KEY', tenant.key)
      .send({ role: 'READ_ONLY' })
      .expect(200);
    await http().delete(`/tenants/self/members/${memberId}`).set('BT-API-KEY', tenant.key).expect(204);
    const second = (await invite('other@example.com')).body.id as string;
    await http().delete(`/tenants/self/invitations/${second}`).set('BT-API-KEY', tenant.key).expect(204);
    expect(await events()).toEqual([
      { type: 'tenant.invitation.created', id: first },
      { type: 'tenant.invitation.resent', id: first },
      { type: 'tenant.member.created', id: memberId },
      { type: 'tenant.invitation.accepted', id: first },
      { type: 'tenant.member.updated', id: memberId },
      { type: 'tenant.member.deleted', id: memberId },
      { type: 'tenant.invitation.created', id: second },
      { type: 'tenant.invitation.deleted', id: second },
    ]);
  });

  it('delivers them like token events, with no names, e-mail addresses, keys or configuration', async () => {
    const created = await http()
      .post('/applications')
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'Secret Name', type: 'private', permissions: ['token:read'] })
      .expect(201);
    await http()
      .post('/tenants/self/invitations')
      .set('BT-API-KEY', tenant.key)
      .send({ email: 'hidden@example.com' });
    expect(await fx.ctx.get(WebhookSender).deliverDue()).toBe(2);
    const bodies = receiver.received.map((d) => d.body).join('\n');
    expect(bodies).toContain(created.body.id as string);
    for (const leak of ['Secret Name', created.body.key as string, 'hidden@example.com', 'example.com']) {
      expect(bodies).not.toContain(leak);
    }
  });
});
