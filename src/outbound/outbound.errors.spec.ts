import { OutboundError, toOutboundError, toResolutionRefusal } from './outbound.errors';

const withCode = (code: string): Error =>
  Object.assign(new Error(`something ${code} 4242424242424242`), { code });

describe('toOutboundError', () => {
  it.each([
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls_failure', 502, 'The destination certificate is not trusted.'],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'tls_failure', 502, 'The destination certificate is not trusted.'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'tls_failure', 502, 'The destination certificate is not trusted.'],
    ['CERT_HAS_EXPIRED', 'tls_failure', 502, 'The destination certificate is expired or not yet valid.'],
    [
      'ERR_TLS_CERT_ALTNAME_INVALID',
      'tls_failure',
      502,
      'The destination certificate does not match the host name.',
    ],
    [
      'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
      'tls_failure',
      502,
      'The destination does not support TLS 1.2 or later.',
    ],
    [
      'ERR_SSL_UNSUPPORTED_PROTOCOL',
      'tls_failure',
      502,
      'The destination does not support TLS 1.2 or later.',
    ],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'tls_failure', 502, 'The TLS handshake with the destination failed.'],
    [
      'ENOTFOUND',
      'destination_refused',
      400,
      'The destination is not allowed: its host name does not resolve to a public address.',
    ],
    [
      'EAI_AGAIN',
      'destination_refused',
      400,
      'The destination is not allowed: its host name does not resolve to a public address.',
    ],
    ['ECONNREFUSED', 'connection_failed', 502, 'The destination refused the connection.'],
    ['ECONNRESET', 'connection_failed', 502, 'The connection to the destination was closed unexpectedly.'],
    ['EHOSTUNREACH', 'connection_failed', 502, 'The destination is unreachable.'],
    ['ETIMEDOUT', 'connection_failed', 502, 'The destination is unreachable.'],
    ['HPE_INVALID_CONSTANT', 'upstream_failed', 502, 'The destination sent an invalid HTTP response.'],
    ['ERR_SOMETHING_ELSE', 'upstream_failed', 502, 'The request to the destination failed.'],
  ])('maps %s to %s (%i) without quoting the original message', (code, failure, status, detail) => {
    const mapped = toOutboundError(withCode(code));
    expect([mapped.failure, mapped.status, mapped.detail, mapped.code]).toEqual([
      failure,
      status,
      detail,
      code,
    ]);
    expect(mapped.message).not.toContain('4242');
  });

  it('passes an OutboundError through and maps a code-less error to 502', () => {
    const refused = OutboundError.refused('because');
    expect(toOutboundError(refused)).toBe(refused);
    expect(toOutboundError(new Error('x')).status).toBe(502);
    expect(toOutboundError('not an error').status).toBe(502);
  });

  it('maps any resolver failure to the one refusal after resolution, keeping the code for the log', () => {
    const mapped = toResolutionRefusal(withCode('ESERVFAIL'));
    expect([mapped.failure, mapped.status, mapped.detail, mapped.code]).toEqual([
      'destination_refused',
      400,
      'The destination is not allowed: its host name does not resolve to a public address.',
      'ESERVFAIL',
    ]);
    expect(toResolutionRefusal(new Error('boom')).detail).toBe(mapped.detail);
  });

  it('tells the log what the answer leaves out: no such name, a failed lookup, or a refused address', () => {
    const reasons = [
      toResolutionRefusal(withCode('ENOTFOUND')),
      toOutboundError(withCode('EAI_NONAME')),
      toResolutionRefusal(withCode('EAI_AGAIN')),
      toResolutionRefusal(new Error('no code')),
      OutboundError.addressRefused('private'),
    ].map((err) => [err.detail, err.logReason]);
    const detail = 'The destination is not allowed: its host name does not resolve to a public address.';
    expect(reasons).toEqual([
      [detail, 'the host name does not resolve (ENOTFOUND)'],
      [detail, 'the host name does not resolve (EAI_NONAME)'],
      [detail, 'the DNS lookup of the host name failed (EAI_AGAIN)'],
      [detail, 'the host name does not resolve'],
      [detail, 'the host name resolves to a refused address (private)'],
    ]);
  });
});
