import { Mailer, MailMessage } from '../../src/tenants/invitations/mailer';

/** A Mailer double that keeps what it was asked to send. */
export class CapturingMailer extends Mailer {
  readonly sent: MailMessage[] = [];
  send(message: MailMessage): Promise<void> {
    this.sent.push(message);
    return Promise.resolve();
  }
}

/** The acceptance secret of an invitation e-mail's text part. */
export function secretOf(text: string): string {
  const match = /\/invitations\/accept\?token=([1-9A-HJ-NP-Za-km-z]+)/.exec(text);
  if (match === null) {
    throw new Error('no acceptance link in the e-mail');
  }
  return match[1];
}
