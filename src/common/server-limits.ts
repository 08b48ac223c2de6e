import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import type { ServerLimitsConfig } from '../config/app-config';
import ipaddr from 'ipaddr.js';

/** Descriptors kept for everything that is not a client connection (database, sandbox workers, files). */
const RESERVED_DESCRIPTORS = 256;

/**
 * The key one client's connections are counted under: the IPv4 address (also when it arrives IPv4-mapped
 * on a dual-stack socket), or the /64 of an IPv6 address, since one subscriber usually holds a whole /64.
 */
export function clientAddressKey(address: string | undefined): string {
  if (address === undefined || !ipaddr.isValid(address)) {
    return address ?? 'unknown';
  }
  // process() turns an IPv4-mapped IPv6 address into the IPv4 address it carries.
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') {
    return parsed.toString();
  }
  return `${Buffer.from(parsed.toByteArray().slice(0, 8)).toString('hex')}/64`;
}

/** The soft limit on open descriptors of this process (Linux /proc), or null where it cannot be read. */
export function openFilesLimit(limits = '/proc/self/limits'): number | null {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(limits, 'utf8'));
    return line === null || line[1] === 'unlimited' ? null : Number(line[1]);
  } catch {
    return null;
  }
}

/**
 * HTTP_MAX_CONNECTIONS, lowered to what the descriptor limit leaves after a reserve: past that, accept()
 * itself would fail with EMFILE and the database and workers with it. `lowered` says it was.
 */
export function effectiveMaxConnections(
  configured: number,
  descriptors: number | null,
): { max: number; lowered: boolean } {
  if (descriptors === null) {
    return { max: configured, lowered: false };
  }
  const fits = Math.max(16, descriptors - RESERVED_DESCRIPTORS);
  return fits < configured ? { max: fits, lowered: true } : { max: configured, lowered: false };
}

/**
 * Applies the connection limits and timeouts to an HTTP server (the API's and the metrics port's):
 * - more than `maxConnectionsPerAddress` connections from one client: the new one is closed at once;
 * - more than `maxConnections` in all (lowered to fit the descriptor limit): Node closes the new one;
 * - headers within `headersTimeoutMs` and the whole request within `requestTimeoutMs` (Node checks
 *   these every 30 s, so a socket may live up to 30 s past them), `keepAliveTimeoutMs` between requests;
 * - a socket without traffic for `idleTimeoutMs` is closed, unless a request was received whole and the
 *   vault is still answering it (a proxy destination or a sandbox run, which have their own time limits).
 */
export function applyServerLimits(
  server: Server,
  limits: ServerLimitsConfig,
  descriptors: number | null = openFilesLimit(),
): { maxConnections: number; lowered: boolean } {
  const effective = effectiveMaxConnections(limits.maxConnections, descriptors);
  server.maxConnections = effective.max;
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.timeout = limits.idleTimeoutMs;

  const perAddress = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const key = clientAddressKey(socket.remoteAddress);
    const open = (perAddress.get(key) ?? 0) + 1;
    if (open > limits.maxConnectionsPerAddress) {
      socket.destroy();
      return;
    }
    perAddress.set(key, open);
    socket.once('close', () => {
      const left = (perAddress.get(key) ?? 1) - 1;
      if (left === 0) {
        perAddress.delete(key);
      } else {
        perAddress.set(key, left);
      }
    });
  });

  const answering = new WeakMap<Socket, Set<[IncomingMessage, ServerResponse]>>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const exchanges = answering.get(socket) ?? new Set();
    answering.set(socket, exchanges);
    const exchange: [IncomingMessage, ServerResponse] = [req, res];
    exchanges.add(exchange);
    res.once('close', () => exchanges.delete(exchange));
  });
  // With a listener here Node no longer closes timed-out sockets itself: this decides for every socket.
  server.on('timeout', (socket: Socket) => {
    const exchanges = answering.get(socket);
    const busy = [...(exchanges ?? [])].some(([req, res]) => req.complete && !res.writableEnded);
    if (!busy) {
      socket.destroy();
    }
  });
  return { maxConnections: effective.max, lowered: effective.lowered };
}
