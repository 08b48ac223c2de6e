import { inertName, invitationMail } from './invitation-mail';

describe('inertName', () => {
  it.each([
    ['Acme Inc.', 'Acme Inc.'],
    ['line\r\nbreak\u2028and\u0000nul', 'line break and nul'],
    ['https://evil.example/x', 'https[:]//evil[.]example/x'],
    ['evil\uFF0Eexample', 'evil[.]example'],
    ['write to boss@evil.example', 'write to boss[@]evil[.]example'],
    ['\u202E\u200B', 'fallback'],
    ['x'.repeat(150), `${'x'.repeat(99)}…`],
  ])('%p → %p', (name, inert) => {
    expect(inertName(name, 'fallback')).toBe(inert);
  });
});

describe('invitationMail', () => {
  it('keeps the names out of the text part’s line structure and escapes them in HTML', () => {
    const mail = invitationMail({
      to: 'a@example.com',
      tenantName: '<b>Evil</b>\nTenant',
      inviter: 'App\r\nBcc: x@y.z',
      link: 'https://vault.example.com/invitations/accept?token=abc',
      expiresAt: new Date('2026-01-01T00:00:00Z'),
    });
    expect(mail.subject).toBe('You are invited to <b>Evil</b> Tenant on Token Vault');
    expect(mail.text.split('\n')[0]).toBe(
      'App Bcc: x[@]y[.]z invited you to join <b>Evil</b> Tenant on Token Vault.',
    );
    expect(mail.html).toContain('&lt;b&gt;Evil&lt;/b&gt; Tenant');
  });
});
