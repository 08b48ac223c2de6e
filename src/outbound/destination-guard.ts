import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import * as tls from 'node:tls';
import { classifyAddress } from './address-ranges';
import { checkHostname } from './destination-url';
import { OutboundError, toOutboundError, toResolutionRefusal } from './outbound.errors';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Turns a checked host name (no trailing dot) into every address it resolves to. */
export type OutboundResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** One connection attempt to an address the guard has checked. */
export interface ConnectTarget {
  /** The checked IP address to connect to; never a name, so nothing resolves again after the check. */
  address: string;
  family: 4 | 6;
  port: number;
  /** The destination host name: sent as SNI and verified against the certificate. */
  servername: string;
  /** Bound on the TCP connect plus TLS handshake. */
  timeoutMs: number;
}

/** Opens a verified TLS connection to the target; resolves once the handshake has completed. */
export type OutboundConnector = (target: ConnectTarget) => Promise<Duplex>;

type LookupAll = (
  hostname: string,
  options: { all: true; order: 'verbatim' },
) => Promise<{ address: string; family: number }[]>;

/**
 * The production resolver: the system resolver (like any other client on the host), asked for the
 * absolute name so that resolv.conf search domains never turn a failed public name into an internal one.
 */
export function createSystemResolver(lookup: LookupAll = dns.lookup): OutboundResolver {
  return async (hostname) => {
    const found = await lookup(`${hostname}.`, { all: true, order: 'verbatim' });
    return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
  };
}

/**
 * The production connector: TLS 1.2 or later, certificate verified against the host name, the system's
 * trusted roots plus `extraCa` (PROXY_CA_FILE, tests only). One secure context serves every connection.
 */
export function createTlsConnector(options: { extraCa?: string | Buffer } = {}): OutboundConnector {
  const secureContext = tls.createSecureContext({
    minVersion: 'TLSv1.2',
    ca: options.extraCa === undefined ? undefined : [...tls.rootCertificates, options.extraCa.toString()],
  });
  return (target) =>
    new Promise<Duplex>((resolve, reject) => {
      const socket = tls.connect({
        host: target.address,
        port: target.port,
        servername: target.servername,
        secureContext,
        minVersion: 'TLSv1.2',
        rejectUnauthorized: true,
        checkServerIdentity: tls.checkServerIdentity,
        ALPNProtocols: ['http/1.1'],
      });
      // Node's own agent turns Nagle off on the sockets it opens; this connector replaces it, so it does too:
      // a request written in several pieces (a streamed body) is not held back waiting for an ACK.
      socket.setNoDelay(true);
      const onTimeout = (): void => {
        socket.destroy(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' }));
      };
      socket.setTimeout(target.timeoutMs, onTimeout);
      // Stays attached: an error between the handshake and the HTTP client taking the socket must not
      // go unhandled; after that the client's own listeners report errors.
      socket.on('error', reject);
      socket.once('secureConnect', () => {
        socket.setTimeout(0);
        socket.off('timeout', onTimeout);
        resolve(socket);
      });
    });
}

export interface GuardOptions {
  resolver: OutboundResolver;
  connector: OutboundConnector;
  /** PROXY_ALLOW_LOOPBACK: loopback addresses pass (tests only; the config refuses it in production). */
  allowLoopback: boolean;
  connectTimeoutMs: number;
}

/**
 * The one place where outbound connections are opened: static host checks, resolution, every resolved
 * address checked, then a connection to a checked address (never to the name, so a second DNS answer
 * cannot slip in between the check and the connect).
 */
export class DestinationGuard {
  constructor(private readonly options: GuardOptions) {}

  /** Resolves the host name and returns its addresses if every one of them may be reached. */
  async resolve(hostname: string): Promise<ResolvedAddress[]> {
    return (await this.check(hostname)).addresses;
  }

  /** A verified TLS connection to `hostname:port`, trying each checked address until one accepts. */
  async connect(hostname: string, port: number): Promise<Duplex> {
    const { name, addresses } = await this.check(hostname);
    let lastError: OutboundError | undefined;
    for (const { address, family } of addresses) {
      try {
        return await this.options.connector({
          address,
          family,
          port,
          servername: name,
          timeoutMs: this.options.connectTimeoutMs,
        });
      } catch (err) {
        lastError = toOutboundError(err);
        // Another address may accept; a TLS or protocol failure would fail the same way on every one.
        if (lastError.failure !== 'connection_failed') {
          throw lastError;
        }
      }
    }
    throw lastError ?? new OutboundError('connection_failed', 'The destination is unreachable.');
  }

  private async check(hostname: string): Promise<{ name: string; addresses: ResolvedAddress[] }> {
    const host = checkHostname(hostname, { allowLoopback: this.options.allowLoopback });
    if (!host.ok) {
      throw OutboundError.refused(host.reason);
    }
    let found: ResolvedAddress[];
    try {
      found = await this.options.resolver(host.hostname);
    } catch (err) {
      throw toResolutionRefusal(err);
    }
    if (found.length === 0) {
      throw OutboundError.unresolved(undefined);
    }
    const addresses: ResolvedAddress[] = [];
    for (const { address } of found) {
      const range = classifyAddress(address);
      if (range !== null && !(range === 'loopback' && this.options.allowLoopback)) {
        // Any bad answer refuses the name: a mixed answer is how rebinding attacks start. The answer says
        // neither the range nor the address: the same words as a name that does not resolve.
        throw OutboundError.addressRefused(range);
      }
      if (!addresses.some((seen) => seen.address === address)) {
        addresses.push({ address, family: isIP(address) === 6 ? 6 : 4 });
      }
    }
    return { name: host.hostname, addresses };
  }
}
