import { escapeHtml } from '../../common/html';
/** No scripts, no external resources: styles inline, the form posts to this origin only. */
export const ACCEPT_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#1b1b1b}
label{display:block;margin-top:1rem;font-weight:600}input{display:block;width:100%;padding:.5rem;font-size:1rem;margin-top:.25rem}
button{margin-top:1.5rem;padding:.6rem 1.2rem;font-size:1rem}p.error{color:#a00000}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

export function acceptForm(
  view: { tenantName: string; inviter: string; email: string },
  secret: string,
): string {
  return page(
    `Join ${view.tenantName}`,
    `<h1>Join ${escapeHtml(view.tenantName)}</h1>
<p>${escapeHtml(view.inviter)} invited <strong>${escapeHtml(view.email)}</strong> to ${escapeHtml(view.tenantName)} on Token Vault.</p>
<form method="post" action="/invitations/accept">
<input type="hidden" name="token" value="${escapeHtml(secret)}">
<label for="first_name">First name</label><input id="first_name" name="first_name" autocomplete="given-name" required maxlength="100">
<label for="last_name">Last name</label><input id="last_name" name="last_name" autocomplete="family-name" required maxlength="100">
<button type="submit">Accept the invitation</button>
</form>`,
  );
}

export function acceptedPage(tenantName: string): string {
  return page(
    'Invitation accepted',
    `<h1>Welcome</h1><p role="status">You are now a member of ${escapeHtml(tenantName)}.</p>`,
  );
}

export function problemPage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p class="error" role="alert">${escapeHtml(message)}</p>`);
}
