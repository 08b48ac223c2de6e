import { ApplicationsService } from '../../src/applications/applications.service';
import { permissionsFor } from '../../src/access/permissions';
import { Clock } from '../../src/common/clock';
import { decodeQuotedPrintable, smtpEnv, startSmtpServer, TestSmtpServer } from '../support/mail';
import { expectProblem } from '../support/problems';
import { TestClock } from '../support/test-clock';
import { TestContext, TestTenant } from '../support/test-app';

const HOUR = 3600_000;

/** Issue 25 item 5 and issue 19 item 7: invitation e-mails as a spam and phishing channel. */
describe('invitation e-mails through a real SMTP server: throttled, names inert', () => {
  let ctx: TestContext;
  let smtp: TestSmtpServer;
  const clock = new TestClock();
  const t0 = Date.parse('2026-11-23T10:00:00Z');

  beforeAll(async () => {
    smtp = await startSmtpServer();
    const limits = { INVITATION_MAILS_PER_ADDRESS_PER_HOUR: '3', INVITATION_MAILS_PER_TENANT_PER_HOUR: '5' };
    ctx = await TestContext.create({
      env: smtpEnv(smtp, limits),
      overrides: [{ provide: Clock, useValue: clock }],
    });
  });
  beforeEach(() => clock.set(t0));
  afterAll(async () => {
    await ctx.close();
    await smtp.close();
  });

  const api = (tenant: TestTenant) => ({
    create: (email: string) =>
      ctx.http.post('/tenants/self/invitations').set('BT-API-KEY', tenant.key).send({ email }),
    resend: (id: string) =>
      ctx.http.post(`/tenants/self/invitations/${id}/resend`).set('BT-API-KEY', tenant.key),
    delete: (id: string) => ctx.http.delete(`/tenants/self/invitations/${id}`).set('BT-API-KEY', tenant.key),
  });
  const lastLink = () =>
    /\/invitations\/accept\?token=([1-9A-HJ-NP-Za-km-z]+)/.exec(
      decodeQuotedPrintable(smtp.received[smtp.received.length - 1].raw),
    )?.[1] ?? '';

  it('sends at most 3 e-mails per address an hour: resend number 3 is a 429 that changes nothing', async () => {
    const tenant = await ctx.newTenant('Resender');
    const { body } = await api(tenant).create('spam@example.com').expect(201);
    const before = smtp.received.length;
    await api(tenant).resend(body.id).expect(200);
    clock.set(t0 + 60_000);
    await api(tenant).resend(body.id).expect(200);
    const link = lastLink();
    clock.set(t0 + 120_000);
    for (let i = 0; i < 20; i++) {
      const res = await api(tenant).resend(body.id);
      expectProblem(res, 429);
      // The oldest of the three left the hour at t0 + 1 h.
      expect(res.headers['retry-after']).toBe(String((HOUR - 120_000) / 1000));
    }
    expect(smtp.received.length - before).toBe(2);
    // The refused resends did not replace the link that was last mailed.
    expect((await ctx.http.get(`/invitations/accept?token=${link}`)).status).toBe(200);
    clock.set(t0 + HOUR);
    await api(tenant).resend(body.id).expect(200);
    expect(smtp.received.length - before).toBe(3);
  });

  it('counts per address across delete and invite again, and 5 e-mails per tenant an hour', async () => {
    const tenant = await ctx.newTenant('Churner');
    for (let i = 0; i < 3; i++) {
      const { body } = await api(tenant).create('churn@example.com').expect(201);
      await api(tenant).delete(body.id).expect(204);
    }
    expectProblem(await api(tenant).create('churn@example.com'), 429);
    await api(tenant).create('one@example.com').expect(201);
    await api(tenant).create('two@example.com').expect(201);
    const refused = await api(tenant).create('three@example.com');
    expectProblem(refused, 429);
    expect(Number(refused.headers['retry-after'])).toBe(HOUR / 1000);
    expect(refused.body.detail).toContain('per tenant');
    // Another tenant has its own count.
    await api(await ctx.newTenant('Bystander'))
      .create('three@example.com')
      .expect(201);
  });

  it('lets exactly the allowed number of concurrent resends through', async () => {
    const tenant = await ctx.newTenant('Racer');
    const { body } = await api(tenant).create('race@example.com').expect(201);
    const statuses = (await Promise.all(Array.from({ length: 8 }, () => api(tenant).resend(body.id)))).map(
      (r) => r.status,
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(6);
  });

  it('writes tenant and application names as one inert line: no CR/LF, no clickable URL', async () => {
    const tenant = await ctx.newTenant('Pay.evil.example');
    const { application, key } = await ctx.get(ApplicationsService).insert(
      tenant.tenantId,
      {
        name: 'Security team\r\n\r\nYour account is locked: https://evil.example/login\u202Emoc.knab',
        type: 'management',
        permissions: permissionsFor('management'),
      },
      null,
    );
    expect(application.id).toBeDefined();
    await ctx.http
      .post('/tenants/self/invitations')
      .set('BT-API-KEY', key ?? '')
      .send({ email: 'target@example.com' })
      .expect(201);
    const mail = decodeQuotedPrintable(smtp.received[smtp.received.length - 1].raw);
    expect(mail).not.toMatch(/https?:\/\/evil/i);
    expect(mail).not.toMatch(/evil\.example/i);
    expect(mail).not.toContain('\u202E');
    expect(mail).toContain(
      'Security team Your account is locked: https[:]//evil[.]example/login moc[.]knab invited you to join Pay[.]evil[.]example on Token Vault.',
    );
    expect(mail).toContain('https://vault.example.com/invitations/accept?token=');
  });
});
