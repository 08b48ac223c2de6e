import { mailFailureCause } from './invitation-mail-sender';

describe('mailFailureCause', () => {
  it("keeps nodemailer's code and the SMTP reply code", () => {
    const refused = Object.assign(
      new Error('Can not send mail to jane@example.com: 550 mailbox unavailable'),
      {
        code: 'EENVELOPE',
        responseCode: 550,
      },
    );
    expect(mailFailureCause(refused)).toBe('EENVELOPE 550');
    expect(mailFailureCause(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ESOCKET' }))).toBe(
      'ESOCKET',
    );
  });

  it('never keeps a message, which can quote addresses', () => {
    expect(mailFailureCause(new Error('to jane@example.com'))).toBe('Error');
    expect(mailFailureCause(Object.assign(new Error('x'), { code: 'jane@example.com' }))).toBe('Error');
    expect(mailFailureCause('jane@example.com')).toBe('string');
  });
});
