import { escapeHtml } from '../../common/html';
import type { MailMessage } from '../../mail/mailer';

export interface InvitationMailInput {
  to: string;
  tenantName: string;
  inviter: string;
  link: string;
  expiresAt: Date;
}

const MAX_NAME_CHARS = 100;

/**
 * A name a tenant chose (tenant, application), made inert for an e-mail whatever was accepted at input:
 * NFKC (so fullwidth `．` and `：` are plain), control, format (bidi overrides, zero-width) and line
 * separator characters become spaces, one line of at most 100 characters, and defanged so no mail client
 * turns it into a link: `://` is written `[:]//`, and a `.` or `@` between letters or digits `[.]` / `[@]`
 * (`evil[.]example`). The vault's own link is the only link in the message.
 */
export function inertName(name: string, fallback: string): string {
  const line = name
    .normalize('NFKC')
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\s]+/gu, ' ')
    .trim();
  const chars = [...line];
  const short = chars.length > MAX_NAME_CHARS ? `${chars.slice(0, MAX_NAME_CHARS - 1).join('')}…` : line;
  const defanged = short
    .replace(/:\/\//g, '[:]//')
    .replace(/(?<=[\p{L}\p{N}])[.@](?=[\p{L}\p{N}])/gu, (c) => `[${c}]`);
  return defanged === '' ? fallback : defanged;
}

/** The invitation e-mail: plain text and HTML, names made inert, every value escaped in the HTML part. */
export function invitationMail(input: InvitationMailInput): MailMessage {
  const { to, link, expiresAt } = input;
  const tenantName = inertName(input.tenantName, 'a tenant');
  const inviter = inertName(input.inviter, 'A member of the team');
  const expires = expiresAt.toUTCString();
  const subject = `You are invited to ${tenantName} on Token Vault`;
  const text = [
    `${inviter} invited you to join ${tenantName} on Token Vault.`,
    '',
    `Accept the invitation: ${link}`,
    '',
    `The link works once and expires on ${expires}.`,
    'If you did not expect this invitation, ignore this e-mail.',
  ].join('\n');
  const html = `<!doctype html>
<html lang="en"><body style="font-family: sans-serif; line-height: 1.5">
<p>${escapeHtml(inviter)} invited you to join <strong>${escapeHtml(tenantName)}</strong> on Token Vault.</p>
<p><a href="${escapeHtml(link)}">Accept the invitation</a></p>
<p>The link works once and expires on ${escapeHtml(expires)}.<br>If you did not expect this invitation, ignore this e-mail.</p>
</body></html>`;
  return { to, subject, text, html };
}
