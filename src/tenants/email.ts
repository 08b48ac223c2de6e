import { isEmail } from 'class-validator';
import { domainToUnicode } from 'node:url';

/** The address options of the invitation DTO, applied again to the canonical form. */
export const EMAIL_OPTIONS = {
  allow_display_name: false,
  require_tld: true,
  allow_ip_domain: false,
} as const;

/**
 * The one stored and compared form of an e-mail address: trimmed, NFKC, then lower-case (NFKC again, as
 * lower-casing can leave characters NFKC would still change). Fullwidth letters and signs such as KELVIN
 * SIGN fold to their ASCII letters here, so `vic@ban\u212A.example` is `vic@bank.example`, the mailbox the
 * invitation then goes to. Stored addresses are compared to it byte for byte, never through lower().
 */
export function canonicalEmail(raw: string): string {
  return raw.trim().normalize('NFKC').toLowerCase().normalize('NFKC');
}

/** Letters of each script; Han, kana and Hangul count as one, as Chinese, Japanese and Korean names mix them. */
const SCRIPTS: [string, RegExp][] = [
  ['Latin', /\p{Script=Latin}/u],
  ['Greek', /\p{Script=Greek}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Armenian', /\p{Script=Armenian}/u],
  ['Hebrew', /\p{Script=Hebrew}/u],
  ['Arabic', /\p{Script=Arabic}/u],
  ['CJK', /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}]/u],
];

function scriptsOf(label: string): Set<string> {
  const scripts = new Set<string>();
  for (const char of label) {
    if (/\p{L}/u.test(char)) {
      scripts.add(SCRIPTS.find(([, pattern]) => pattern.test(char))?.[0] ?? 'Other');
    }
  }
  return scripts;
}

/**
 * Why a canonical address is refused, or null when it is accepted. The rule: the canonical form is
 * printable ASCII (international domains as their `xn--` A-labels) and a well-formed address, and every
 * `xn--` label decodes, to letters of one script only (Latin, Greek, Cyrillic, ...; CJK counts as one). Non-ASCII local parts and Unicode labels are
 * refused outright, since their look-alikes cannot be told apart reliably.
 */
export function emailRefusal(canonical: string): string | null {
  if (!/^[\x21-\x7e]+$/.test(canonical)) {
    return 'email must be ASCII once normalised (NFKC, lower case); write international domains as xn-- labels';
  }
  if (!isEmail(canonical, EMAIL_OPTIONS)) {
    return 'email must be an e-mail address';
  }
  const domain = canonical.slice(canonical.lastIndexOf('@') + 1);
  for (const label of domain.split('.')) {
    const decoded = label.startsWith('xn--') ? domainToUnicode(label) : label;
    if (decoded === '' || decoded.startsWith('xn--')) {
      return 'email has a domain label that is not valid punycode';
    }
    if (scriptsOf(decoded).size > 1) {
      return 'email must not mix scripts in one domain label';
    }
  }
  return null;
}

/** True when the stored address is one the rule accepts as it is: the only kind an invitation attaches. */
export function isCanonicalEmail(stored: string): boolean {
  return canonicalEmail(stored) === stored && emailRefusal(stored) === null;
}
