import { decodeQuotedPrintable, smtpEnv, startSmtpServer, TestSmtpServer } from '../support/mail';
import { TestContext, TestTenant } from '../support/test-app';

describe('invitation e-mail through a real SMTP server', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let smtp: TestSmtpServer;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    ctx = await TestContext.create({ env: smtpEnv(smtp, { MAIL_FROM: 'Vault <vault@example.com>' }) });
    tenant = await ctx.newTenant('Acme');
  });
  afterAll(async () => {
    await ctx.close();
    await smtp.close();
  });

  it('delivers a message with text and HTML parts whose link works end to end', async () => {
    const res = await ctx.http
      .post('/tenants/self/invitations')
      .set('BT-API-KEY', tenant.key)
      .send({ email: 'jane@example.com' });
    expect(res.status).toBe(201);
    expect(smtp.received).toHaveLength(1);
    const mail = decodeQuotedPrintable(smtp.received[0].raw);
    expect(smtp.received[0].to).toEqual(['jane@example.com']);
    expect(mail).toMatch(/Content-Type: text\/plain/i);
    expect(mail).toMatch(/Content-Type: text\/html/i);
    expect(mail).toContain('Acme');
    expect(mail).toContain('From: Vault <vault@example.com>');
    const token = /https:\/\/vault\.example\.com\/invitations\/accept\?token=([1-9A-HJ-NP-Za-km-z]+)/.exec(
      mail,
    )?.[1];
    expect(token).toBeDefined();
    const page = await ctx.http.get(`/invitations/accept?token=${token}`);
    expect(page.status).toBe(200);
    const accepted = await ctx.http
      .post('/invitations/accept')
      .send({ token, first_name: 'Jane', last_name: 'Doe' });
    expect(accepted.status).toBe(200);
    expect(accepted.body.member.user.email).toBe('jane@example.com');
  });

  it('keeps the invitation when the server refuses, and resend delivers once it accepts', async () => {
    smtp.refusing = true;
    const before = smtp.received.length;
    const res = await ctx.http
      .post('/tenants/self/invitations')
      .set('BT-API-KEY', tenant.key)
      .send({ email: 'later@example.com' });
    expect(res.status).toBe(201);
    expect(res.body.delivery).toEqual(expect.objectContaining({ status: 'pending', attempts: 1 }));
    expect(smtp.received).toHaveLength(before);
    expect(ctx.logs.some((l) => l.includes('invitation e-mail not sent; will retry'))).toBe(true);
    expect(
      (await ctx.http.get(`/tenants/self/invitations/${res.body.id}`).set('BT-API-KEY', tenant.key)).body
        .status,
    ).toBe('PENDING');
    smtp.refusing = false;
    const resent = await ctx.http
      .post(`/tenants/self/invitations/${res.body.id}/resend`)
      .set('BT-API-KEY', tenant.key);
    expect(resent.status).toBe(200);
    expect(resent.body.delivery).toEqual(expect.objectContaining({ status: 'sent', attempts: 1 }));
    expect(smtp.received).toHaveLength(before + 1);
    expect(smtp.received[before].to).toEqual(['later@example.com']);
  });
});
