import { ApiError } from '../common/api-error';

/** What went wrong on the way out; each kind has one HTTP status (see OUTBOUND_STATUS). */
export type OutboundFailure =
  | 'destination_refused'
  | 'invalid_request'
  | 'request_body_failed'
  | 'connection_failed'
  | 'tls_failure'
  | 'upstream_failed'
  | 'response_too_large'
  | 'timeout'
  | 'aborted';

/**
 * The destination guard's refusals are the caller's input at fault (400, like any other invalid URL);
 * failures of the far side are 502; PROXY_TIMEOUT_MS is 408 as the spec asks; 499 when our own caller
 * went away first (nobody reads that answer).
 */
export const OUTBOUND_STATUS: Record<OutboundFailure, number> = {
  destination_refused: 400,
  invalid_request: 400,
  request_body_failed: 400,
  connection_failed: 502,
  tls_failure: 502,
  upstream_failed: 502,
  response_too_large: 502,
  timeout: 408,
  aborted: 499,
};

/** Resolver answers that the name has no address (as opposed to the lookup failing). */
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA', 'ENONAME']);
const NOT_ALLOWED = 'The destination is not allowed: its host name does not resolve to a public address.';

/**
 * A failed outbound request. `detail` names the reason only: never the URL, a header, the body or a
 * resolved address, since the caller's request may carry detokenized card data. `code` is the underlying
 * Node or OpenSSL error code, safe to log.
 */
export class OutboundError extends ApiError {
  constructor(
    readonly failure: OutboundFailure,
    detail: string,
    readonly code?: string,
    /** For the operator's log only: what the answer's detail leaves out (why the guard refused). */
    readonly logReason?: string,
  ) {
    super(OUTBOUND_STATUS[failure], detail);
    this.name = 'OutboundError';
  }

  /** A refusal by the static checks on the URL as written: the reason is about the caller's own input. */
  static refused(reason: string): OutboundError {
    return new OutboundError('destination_refused', `The destination is not allowed: ${reason}.`);
  }

  /**
   * A refusal decided from resolving the host name: the name does not resolve, the resolver failed, or an
   * address is not public. One answer for all of them, naming the cause an honest caller can act on (the
   * name must resolve to a public address), so that probing learns nothing of which names exist inside or
   * which ranges they point to. The log says which it was (`logReason`).
   */
  static notAllowed(code: string | undefined, logReason: string): OutboundError {
    return new OutboundError('destination_refused', NOT_ALLOWED, code, logReason);
  }

  /** The resolver found no address, or failed: which of the two, and its code, for the log. */
  static unresolved(code: string | undefined): OutboundError {
    const reason =
      code === undefined || NO_SUCH_NAME.has(code)
        ? 'the host name does not resolve'
        : 'the DNS lookup of the host name failed';
    return OutboundError.notAllowed(code, code === undefined ? reason : `${reason} (${code})`);
  }

  /** The name resolves, but to an address the guard refuses. */
  static addressRefused(range: string): OutboundError {
    return OutboundError.notAllowed(undefined, `the host name resolves to a refused address (${range})`);
  }

  static timeout(ms: number): OutboundError {
    return new OutboundError('timeout', `The destination did not answer within ${ms} ms.`);
  }
}

const CERT_UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_REVOKED',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'CERT_CHAIN_TOO_LONG',
]);
const CERT_DATES = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
const CERT_NAME = new Set(['ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH']);
const TLS_VERSION = /PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL|NO_PROTOCOLS_AVAILABLE|VERSION_TOO_LOW/;
const DNS_CODES = new Set([
  'ENOTFOUND',
  'ENODATA',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'EAI_NODATA',
  'ESERVFAIL',
  'ENONAME',
  'EREFUSED',
  'ETIMEOUT',
]);
const UNREACHABLE = new Set([
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'ETIMEDOUT',
  'EADDRNOTAVAIL',
]);

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Errors from a resolver (ours or an injected one) read like any refusal after resolution. */
export function toResolutionRefusal(err: unknown): OutboundError {
  if (err instanceof OutboundError) {
    return err;
  }
  return OutboundError.unresolved(errorCode(err));
}

/** Maps a Node socket, TLS or HTTP client error to an OutboundError; an OutboundError passes through. */
export function toOutboundError(err: unknown): OutboundError {
  if (err instanceof OutboundError) {
    return err;
  }
  const code = errorCode(err);
  const fail = (failure: OutboundFailure, detail: string): OutboundError =>
    new OutboundError(failure, detail, code);
  if (code === undefined) {
    return fail('upstream_failed', 'The request to the destination failed.');
  }
  if (CERT_UNTRUSTED.has(code)) {
    return fail('tls_failure', 'The destination certificate is not trusted.');
  }
  if (CERT_DATES.has(code)) {
    return fail('tls_failure', 'The destination certificate is expired or not yet valid.');
  }
  if (CERT_NAME.has(code)) {
    return fail('tls_failure', 'The destination certificate does not match the host name.');
  }
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')) {
    return TLS_VERSION.test(code)
      ? fail('tls_failure', 'The destination does not support TLS 1.2 or later.')
      : fail('tls_failure', 'The TLS handshake with the destination failed.');
  }
  if (DNS_CODES.has(code)) {
    return OutboundError.unresolved(code);
  }
  if (code === 'ECONNREFUSED') {
    return fail('connection_failed', 'The destination refused the connection.');
  }
  if (code === 'ECONNRESET' || code === 'EPIPE') {
    return fail('connection_failed', 'The connection to the destination was closed unexpectedly.');
  }
  if (UNREACHABLE.has(code)) {
    return fail('connection_failed', 'The destination is unreachable.');
  }
  if (code.startsWith('HPE_')) {
    return fail('upstream_failed', 'The destination sent an invalid HTTP response.');
  }
  return fail('upstream_failed', 'The request to the destination failed.');
}
