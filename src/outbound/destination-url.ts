import { LRUCache } from 'lru-cache';
import { isIP } from 'node:net';

export type DestinationCheck =
  | {
      ok: true;
      url: URL;
      /** Lower-case DNS name without a trailing dot: what is resolved, sent as SNI and checked in the certificate. */
      hostname: string;
      port: number;
    }
  | { ok: false; reason: string };

export type HostnameCheck = { ok: true; hostname: string } | { ok: false; reason: string };

export interface StaticCheckOptions {
  /**
   * PROXY_ALLOW_LOOPBACK (tests, local mocks): the name `localhost` itself passes the static checks; its
   * resolved addresses are still checked, and only loopback passes, under the same switch.
   */
  allowLoopback?: boolean;
}

const MAX_URL_LENGTH = 8192;

/**
 * Names that never belong to a third-party API: RFC 6761/6762 local names, ICANN's private-use `.internal`,
 * reverse-lookup and `.onion` names. A single-label name is refused too (resolver search lists turn it
 * into an internal name).
 */
const REFUSED_SUFFIXES = ['localhost', 'local', 'localdomain', 'internal', 'arpa', 'onion'];

// A last label that a URL parser could read as an IPv4 number (decimal, octal, hex); no TLD looks like this.
const NUMERIC_LABEL = /^(0x[0-9a-f]*|[0-9]+)$/i;
const DNS_LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

const refuse = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });

/** The static checks on a host name as a WHATWG URL parser leaves it (punycode for non-ASCII names). */
export function checkHostname(hostname: string, options: StaticCheckOptions = {}): HostnameCheck {
  const host = hostname.toLowerCase();
  if (host.startsWith('[') || isIP(host) !== 0) {
    return refuse('the host must be a DNS name, not an IP address');
  }
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name === '') {
    return refuse('the URL has no host');
  }
  if (name === 'localhost' && options.allowLoopback === true) {
    return { ok: true, hostname: name };
  }
  const labels = name.split('.');
  if (NUMERIC_LABEL.test(labels[labels.length - 1])) {
    return refuse('the host must be a DNS name, not an IP address');
  }
  if (name.length > 253 || !labels.every((label) => DNS_LABEL.test(label))) {
    return refuse('the host is not a valid DNS name');
  }
  const tld = labels[labels.length - 1];
  if (tld === 'localhost') {
    return refuse('localhost is not allowed');
  }
  if (REFUSED_SUFFIXES.includes(tld)) {
    return refuse(`host names under .${tld} are not allowed`);
  }
  if (labels.length < 2) {
    return refuse('the host must be a fully qualified domain name');
  }
  return { ok: true, hostname: name };
}

/**
 * The URLs that checkDestinationUrl returned, with the options they passed under: one handed back unchanged
 * (the forwarder's checked URL, given to the outbound client) is not parsed and checked again.
 */
const passed = new WeakMap<URL, { href: string; allowLoopback: boolean; check: DestinationCheck }>();

/**
 * The texts that passed lately (a proxy's destination with its caller's path), keyed by the options and the
 * text, each with the href its URL had: one whose URL was changed since is checked again.
 */
const recent = new LRUCache<string, { check: DestinationCheck & { ok: true }; href: string }>({ max: 256 });

/**
 * The checks that need no DNS: `https:` only, a DNS host name (no IP literal in any notation, no local
 * names), no user information, a valid port. /proxies validates `destination_url` with this at write time;
 * the outbound client repeats it on every request and then checks the resolved addresses.
 */
export function checkDestinationUrl(input: string | URL, options: StaticCheckOptions = {}): DestinationCheck {
  const raw = typeof input === 'string' ? input : input.href;
  const allowLoopback = options.allowLoopback === true;
  const key = `${allowLoopback ? 'l' : 's'}${raw}`;
  if (typeof input !== 'string') {
    const earlier = passed.get(input);
    if (earlier !== undefined && earlier.href === raw && earlier.allowLoopback === allowLoopback) {
      return earlier.check;
    }
  } else {
    const seen = recent.get(key);
    if (seen !== undefined && seen.check.url.href === seen.href) {
      return seen.check;
    }
  }
  const check = checkText(raw, options);
  if (check.ok) {
    recent.set(key, { check, href: check.url.href });
    // Kept only when the URL reads back as the text that passed: then checking it again gives this answer.
    if (check.url.href === raw) {
      passed.set(check.url, { href: raw, allowLoopback, check });
    }
  }
  return check;
}

function checkText(raw: string, options: StaticCheckOptions): DestinationCheck {
  if (raw.length > MAX_URL_LENGTH) {
    return refuse('the URL is too long');
  }
  // WHATWG parsing silently drops tabs, newlines and surrounding spaces; refuse them instead of guessing.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f]/.test(raw)) {
    return refuse('the URL contains whitespace or control characters');
  }
  // WHATWG reads `\` as `/` in https URLs, other parsers do not: refuse the ambiguity.
  if (raw.includes('\\')) {
    return refuse('the URL contains a backslash');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('the URL is not valid');
  }
  if (url.protocol !== 'https:') {
    return refuse('only https URLs are allowed');
  }
  // `https://@host` parses to an empty user name that the URL object no longer shows: look at the raw text.
  const authority = /^[a-z][a-z0-9+.-]*:\/*([^/?#]*)/i.exec(raw)?.[1] ?? '';
  if (url.username !== '' || url.password !== '' || authority.includes('@')) {
    return refuse('user information in the URL is not allowed');
  }
  const host = checkHostname(url.hostname, options);
  if (!host.ok) {
    return host;
  }
  const port = url.port === '' ? 443 : Number(url.port);
  if (port < 1 || port > 65535) {
    return refuse('the port is not valid');
  }
  return { ok: true, url, hostname: host.hostname, port };
}
