import { ApplicationLookups } from '../../src/applications/application-lookups.service';
import { Clock } from '../../src/common/clock';
import { Database } from '../../src/database/database.service';
import { TenantCipher } from '../../src/crypto/tenant-cipher.service';
import { InvitationMailSender } from '../../src/tenants/invitations/invitation-mail-sender';
import {
  InvitationMailsRepository,
  MAX_MAIL_ATTEMPTS,
} from '../../src/tenants/invitations/invitation-mails.repository';
import { InvitationsRepository } from '../../src/tenants/invitations/invitations.repository';
import { TenantsService } from '../../src/tenants/tenants.service';
import { Mailer } from '../../src/mail/mailer';
import { smtpEnv, startSmtpServer, TestSmtpServer } from '../support/mail';
import { TestClock } from '../support/test-clock';
import { TestContext, TestTenant } from '../support/test-app';

const HOUR = 3600_000;

/** Issue 24 item 5: invitation e-mails go through an outbox that survives a mail server outage and a restart. */
describe('invitation e-mail outbox', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let smtp: TestSmtpServer;
  let port: number;
  const clock = new TestClock();

  beforeAll(async () => {
    smtp = await startSmtpServer();
    port = Number(new URL(smtp.url).port);
    ctx = await TestContext.create({ env: smtpEnv(smtp), overrides: [{ provide: Clock, useValue: clock }] });
    tenant = await ctx.newTenant('Acme');
  });
  beforeEach(() => {
    clock.set(Date.parse('2026-11-23T10:00:00Z'));
    smtp.refusing = false;
  });
  afterAll(async () => {
    await ctx.close();
    await smtp.close();
  });

  const invite = (email: string) =>
    ctx.http.post('/tenants/self/invitations').set('BT-API-KEY', tenant.key).send({ email });
  const get = (id: string) => ctx.http.get(`/tenants/self/invitations/${id}`).set('BT-API-KEY', tenant.key);
  const sender = () => ctx.get(InvitationMailSender);
  const mailsTo = (address: string) => smtp.received.filter((m) => m.to.includes(address)).length;
  /** A second sender on the same database, as another replica runs it. */
  const replicaSender = () =>
    new InvitationMailSender(
      new InvitationMailsRepository(ctx.get(Database), clock),
      ctx.get(InvitationsRepository),
      ctx.get(TenantsService),
      ctx.get(TenantCipher),
      ctx.get(Mailer),
      ctx.get(ApplicationLookups),
      clock,
      ctx.config,
    );

  it('creates the invitation while the mail server is down, says pending, and mails it once when it is back', async () => {
    await smtp.close();
    const res = await invite('down@example.com');
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('PENDING');
    expect(res.body.delivery).toEqual({
      status: 'pending',
      attempts: 1,
      last_attempt_at: clock.now().toISOString(),
      last_error: expect.stringMatching(/^[A-Z]+$/),
    });
    // Not due again before its backoff.
    expect(await sender().deliverDue()).toBe(0);

    smtp = await startSmtpServer(port);
    clock.advance(HOUR);
    await Promise.all([sender().deliverDue(), replicaSender().deliverDue(), sender().deliverDue()]);
    await sender().deliverDue();
    expect(mailsTo('down@example.com')).toBe(1);
    const after = await get(res.body.id);
    expect(after.body.delivery).toEqual({
      status: 'sent',
      attempts: 2,
      last_attempt_at: clock.now().toISOString(),
      last_error: null,
    });
    const listed = await ctx.http.get('/tenants/self/invitations').set('BT-API-KEY', tenant.key);
    expect(listed.body.data.find((i: { id: string }) => i.id === res.body.id).delivery.status).toBe('sent');
  });

  it('mails each pending invitation exactly once when two senders look at the same time', async () => {
    smtp.refusing = true;
    const addresses = Array.from({ length: 6 }, (_, i) => `pair${i}@example.com`);
    for (const address of addresses) {
      expect((await invite(address)).body.delivery.status).toBe('pending');
    }
    smtp.refusing = false;
    clock.advance(HOUR);
    const replica = replicaSender();
    const attempted = await Promise.all([
      sender().deliverDue(),
      replica.deliverDue(),
      sender().deliverDue(),
      replica.deliverDue(),
    ]);
    expect(attempted.reduce((a, b) => a + b, 0)).toBe(addresses.length);
    clock.advance(HOUR);
    expect(await sender().deliverDue()).toBe(0);
    expect(addresses.map(mailsTo)).toEqual(addresses.map(() => 1));
  });

  it('retries with growing delays, then gives up as failed and erases the secret; resend starts over', async () => {
    smtp.refusing = true;
    const res = await invite('refused@example.com');
    expect(res.body.delivery).toEqual(
      expect.objectContaining({ status: 'pending', attempts: 1, last_error: 'EENVELOPE 550' }),
    );
    const due: number[] = [];
    for (let attempt = 2; attempt <= MAX_MAIL_ATTEMPTS; attempt++) {
      const [{ next_attempt_at }] = await ctx.dataSource.query(
        'SELECT next_attempt_at FROM invitation_outbox WHERE invitation_id = $1',
        [res.body.id],
      );
      due.push(new Date(next_attempt_at).getTime() - clock.now().getTime());
      clock.set(next_attempt_at);
      expect(await sender().deliverDue()).toBe(1);
    }
    // Equal jitter: each wait at least half its doubling step, capped at one hour.
    due.forEach((wait, i) => expect(wait).toBeGreaterThanOrEqual(Math.min(30_000 * 2 ** i, HOUR) / 2));
    expect(Math.max(...due)).toBeLessThanOrEqual(HOUR);
    expect((await get(res.body.id)).body.delivery).toEqual(
      expect.objectContaining({ status: 'failed', attempts: MAX_MAIL_ATTEMPTS, last_error: 'EENVELOPE 550' }),
    );
    expect(
      await ctx.dataSource.query('SELECT secret FROM invitation_outbox WHERE invitation_id = $1', [
        res.body.id,
      ]),
    ).toEqual([{ secret: null }]);
    clock.advance(24 * HOUR);
    expect(await sender().deliverDue()).toBe(0);
    expect(mailsTo('refused@example.com')).toBe(0);

    smtp.refusing = false;
    const resent = await ctx.http
      .post(`/tenants/self/invitations/${res.body.id}/resend`)
      .set('BT-API-KEY', tenant.key);
    expect(resent.body.delivery).toEqual(expect.objectContaining({ status: 'sent', attempts: 1 }));
    expect(mailsTo('refused@example.com')).toBe(1);
  });

  it('does not mail a link that expired while the mail server was down', async () => {
    smtp.refusing = true;
    const res = await invite('late@example.com');
    smtp.refusing = false;
    clock.advance(73 * HOUR);
    expect(await sender().deliverDue()).toBe(1);
    expect(mailsTo('late@example.com')).toBe(0);
    expect((await get(res.body.id)).body.delivery).toEqual(
      expect.objectContaining({ status: 'failed', last_error: 'EXPIRED' }),
    );
  });

  it('delivers after a restart what the mail server refused before it, from the scheduled look', async () => {
    smtp.refusing = true;
    const res = await invite('restart@example.com');
    expect(res.body.delivery.status).toBe('pending');
    // Back while the vault was stopped: the look at boot finds it due.
    smtp.refusing = false;
    clock.advance(HOUR);
    await ctx.restart({ ...smtpEnv(smtp), JOBS_ENABLED: 'true' });
    const deadline = Date.now() + 10_000;
    while (mailsTo('restart@example.com') === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(mailsTo('restart@example.com')).toBe(1);
    const after = await ctx.http
      .get(`/tenants/self/invitations/${res.body.id}`)
      .set('BT-API-KEY', tenant.key);
    expect(after.body.delivery).toEqual(expect.objectContaining({ status: 'sent', attempts: 2 }));
  });
});
