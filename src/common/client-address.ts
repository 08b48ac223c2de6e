import { BlockList, isIP } from 'node:net';
import type { Request } from 'express';

/** `::ffff:10.0.0.1` (an IPv4 peer of a dual-stack socket) as `10.0.0.1`; other addresses as they are. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped === null ? address : mapped[1];
}

/**
 * The reverse proxies (TRUST_PROXY) whose X-Forwarded-For is believed. Express's global `trust proxy`
 * stays off, so `req.ip` keeps meaning the socket's peer everywhere else.
 */
export class TrustedProxies {
  private readonly list = new BlockList();

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [address, prefix] = entry.split('/');
      const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) {
        this.list.addAddress(address, type);
      } else {
        this.list.addSubnet(address, Number(prefix), type);
      }
    }
  }

  trusts(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }

  /**
   * The client's address: the socket's peer, unless that peer is a trusted proxy; then X-Forwarded-For is
   * walked from the right (the entry the nearest proxy appended) past trusted hops to the first address
   * that is not trusted. Entries left of it were written by the client and are never believed; an entry
   * that is not an IP address stops the walk at the last trusted hop.
   */
  clientOf(req: Request): string {
    let address = plain(req.socket.remoteAddress ?? 'unknown');
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((hop) => hop.trim())
      .filter((hop) => hop !== '');
    while (this.trusts(address) && hops.length > 0) {
      const next = plain(hops.pop() as string);
      if (isIP(next) === 0) {
        break;
      }
      address = next;
    }
    return address;
  }
}
