import { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { TestContext, TestTenant } from '../support/test-app';

interface Received {
  to: string[];
  raw: string;
}

/** Quoted-printable soft breaks and escapes undone, enough to read a link out of a message. */
function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

describe('invitation e-mail through a real SMTP server', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let server: SMTPServer;
  const received: Received[] = [];
  let refusing = false;

  beforeAll(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo(address, _session, callback) {
        callback(
          refusing ? Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }) : undefined,
        );
      },
      onData(stream, session, callback) {
        let raw = '';
        stream.on('data', (d: Buffer) => (raw += d.toString()));
        stream.on('end', () => {
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.server.address() as AddressInfo).port;
    ctx = await TestContext.create({
      env: {
        SMTP_URL: `smtp://127.0.0.1:${port}`,
        MAIL_FROM: 'Vault <vault@example.com>',
        PUBLIC_URL: 'https://vault.example.com',
      },
    });
    tenant = await ctx.newTenant('Acme');
  });
  afterAll(async () => {
    await ctx.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('delivers a message with text and HTML parts whose link works end to end', async () => {
    const res = await ctx.http
      .post('/tenants/self/invitations')
      .set('BT-API-KEY', tenant.key)
      .send({ email: 'jane@example.com' });
    expect(res.status).toBe(201);
    expect(received).toHaveLength(1);
    const mail = decodeQuotedPrintable(received[0].raw);
    expect(received[0].to).toEqual(['jane@example.com']);
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
    refusing = true;
    const before = received.length;
    const res = await ctx.http
      .post('/tenants/self/invitations')
      .set('BT-API-KEY', tenant.key)
      .send({ email: 'later@example.com' });
    expect(res.status).toBe(201);
    expect(received).toHaveLength(before);
    expect(ctx.logs.some((l) => l.includes('invitation e-mail could not be sent'))).toBe(true);
    expect(
      (await ctx.http.get(`/tenants/self/invitations/${res.body.id}`).set('BT-API-KEY', tenant.key)).body
        .status,
    ).toBe('PENDING');
    refusing = false;
    const resent = await ctx.http
      .post(`/tenants/self/invitations/${res.body.id}/resend`)
      .set('BT-API-KEY', tenant.key);
    expect(resent.status).toBe(200);
    expect(received).toHaveLength(before + 1);
    expect(received[before].to).toEqual(['later@example.com']);
  });
});
