import { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { MailOutcome, Mailer, MailMessage } from '../../src/mail/mailer';

/** A Mailer double that keeps what it was asked to send, standing for a mail server that takes it. */
export class CapturingMailer extends Mailer {
  readonly sent: MailMessage[] = [];
  send(message: MailMessage): Promise<MailOutcome> {
    this.sent.push(message);
    return Promise.resolve('sent');
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

/** A message the test SMTP server received. */
export interface ReceivedMail {
  to: string[];
  raw: string;
}

/** A real SMTP server on 127.0.0.1 that keeps what it receives, and refuses recipients while `refusing`. */
export interface TestSmtpServer {
  url: string;
  received: ReceivedMail[];
  refusing: boolean;
  close(): Promise<void>;
}

/** On `port` when given: a server started again where a closed one listened (the mail server is back). */
export async function startSmtpServer(port = 0): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const state = { refusing: false };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      callback(
        state.refusing ? Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }) : undefined,
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
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  const listening = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${listening}`,
    received,
    get refusing() {
      return state.refusing;
    },
    set refusing(value: boolean) {
      state.refusing = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Test environment that sends through `smtp`, with links on https://vault.example.com. */
export function smtpEnv(smtp: TestSmtpServer, extra: Record<string, string> = {}): Record<string, string> {
  return { SMTP_URL: smtp.url, PUBLIC_URL: 'https://vault.example.com', ...extra };
}

/** Quoted-printable soft breaks and escapes undone, enough to read a link out of a message. */
export function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
