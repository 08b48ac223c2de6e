import { Logger } from '@nestjs/common';
import { createTransport, Transporter } from 'nodemailer';
import { AppConfig } from '../config/app-config';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** What became of a message: handed to a mail server, or only written to the log (no SMTP_URL). */
export type MailOutcome = 'sent' | 'logged';

/** Sends e-mail. Behind an injectable so tests replace it, and so the transport can change. */
export abstract class Mailer {
  abstract send(message: MailMessage): Promise<MailOutcome>;
}

/** nodemailer over SMTP_URL, from MAIL_FROM. */
export class SmtpMailer extends Mailer {
  private readonly transport: Transporter;

  constructor(private readonly config: AppConfig) {
    super();
    this.transport = createTransport(config.smtpUrl ?? '', {
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
  }

  async send(message: MailMessage): Promise<MailOutcome> {
    await this.transport.sendMail({ from: this.config.mailFrom, ...message });
    return 'sent';
  }
}

/**
 * No SMTP_URL: the message, link included, goes to the log. For development only; the service says so at
 * boot. This is the one place a secret link is ever logged.
 */
export class LogMailer extends Mailer {
  private readonly logger = new Logger('Mail');

  constructor() {
    super();
    this.logger.warn(
      'SMTP_URL is not set: e-mails (invitation links included) are written to this log. Development only.',
    );
  }

  send(message: MailMessage): Promise<MailOutcome> {
    this.logger.log(
      { to: message.to, subject: message.subject, text: message.text },
      'e-mail (not sent: no SMTP_URL)',
    );
    return Promise.resolve('logged');
  }
}

export function mailerFor(config: AppConfig): Mailer {
  return config.smtpUrl === null ? new LogMailer() : new SmtpMailer(config);
}
