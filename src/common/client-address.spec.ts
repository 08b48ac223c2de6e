import type { Request } from 'express';
import { ConfigError, loadConfig } from '../config/app-config';
import { TrustedProxies } from './client-address';

function request(peer: string, forwardedFor?: string | string[]): Request {
  return {
    socket: { remoteAddress: peer },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  } as unknown as Request;
}

describe('TrustedProxies.clientOf', () => {
  const proxies = new TrustedProxies(['10.0.0.0/8', '192.0.2.7', 'fd00::/8']);

  it.each([
    ['an untrusted peer, whatever it forwards', '203.0.113.9', '1.2.3.4', '203.0.113.9'],
    ['a dual-stack untrusted peer', '::ffff:203.0.113.9', '1.2.3.4', '203.0.113.9'],
    ['a trusted peer: the entry it appended', '::ffff:10.1.2.3', '198.51.100.4', '198.51.100.4'],
    ['a client-written entry left of the appended one', '10.1.2.3', '6.6.6.6, 198.51.100.4', '198.51.100.4'],
    ['two trusted hops', '10.1.2.3', '198.51.100.4, 192.0.2.7', '198.51.100.4'],
    ['an IPv6 chain', 'fd00::1', '2001:db8::5', '2001:db8::5'],
    ['only trusted hops: the leftmost', '10.1.2.3', '10.9.9.9', '10.9.9.9'],
    ['garbage appended: the last trusted hop', '10.1.2.3', '1.2.3.4, not-an-ip', '10.1.2.3'],
    ['no header from a trusted peer', '10.1.2.3', undefined, '10.1.2.3'],
    ['repeated headers, joined', '10.1.2.3', ['6.6.6.6', '198.51.100.4'], '198.51.100.4'],
  ])('%s', (_label, peer, header, client) => {
    expect(proxies.clientOf(request(peer, header))).toBe(client);
  });

  it('trusts nobody by default', () => {
    expect(new TrustedProxies([]).clientOf(request('127.0.0.1', '1.2.3.4'))).toBe('127.0.0.1');
  });

  it('reads TRUST_PROXY as addresses and CIDR ranges, and refuses anything else', () => {
    expect(loadConfig({ TRUST_PROXY: ' 10.0.0.0/8, ::1 ' }).trustedProxies).toEqual(['10.0.0.0/8', '::1']);
    expect(loadConfig({}).trustedProxies).toEqual([]);
    for (const bad of ['loopback', '10.0.0.0/33', '::1/129', '10.0.0.1/8/8', '10.0.0.0/x', '1.2.3.4,']) {
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(ConfigError);
    }
  });
});
