import { escapeHtml } from '../../common/html';
import type { MailMessage } from './mailer';

export interface InvitationMailInput {
  to: string;
  tenantName: string;
  inviter: string;
  link: string;
  expiresAt: Date;
}

/** The invitation e-mail: plain text and HTML, every interpolated value escaped in the HTML part. */
export function invitationMail({
  to,
  tenantName,
  inviter,
  link,
  expiresAt,
}: InvitationMailInput): MailMessage {
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
