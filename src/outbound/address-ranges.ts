import { isIPv4, isIPv6 } from 'node:net';

/** Why an address may not be a proxy destination. `null` from classifyAddress means publicly routable. */
export type BlockedRange =
  | 'invalid'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link-local'
  | 'metadata'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved'
  | 'unique-local'
  | 'site-local';

interface Cidr {
  bytes: Uint8Array;
  bits: number;
  range: BlockedRange;
}

function cidr(text: string, range: BlockedRange): Cidr {
  const [address, bits] = text.split('/');
  const bytes = parseIp(address);
  if (bytes === null) {
    throw new Error(`bad CIDR in the range table: ${text}`);
  }
  return { bytes, bits: bits === undefined ? bytes.length * 8 : Number(bits), range };
}

// First match wins: the specific entries (metadata, broadcast) come before the ranges that contain them.
const IPV4_BLOCKED: Cidr[] = [
  cidr('169.254.169.254/32', 'metadata'), // AWS, GCP, Azure, OCI, DigitalOcean, OpenStack
  cidr('169.254.169.253/32', 'metadata'), // AWS DNS
  cidr('169.254.170.2/32', 'metadata'), // AWS ECS task credentials
  cidr('169.254.170.23/32', 'metadata'), // AWS EKS pod identity
  cidr('100.100.100.200/32', 'metadata'), // Alibaba Cloud
  cidr('192.0.0.192/32', 'metadata'), // Oracle Cloud (legacy)
  cidr('255.255.255.255/32', 'broadcast'),
  cidr('0.0.0.0/8', 'unspecified'), // "this network"; 0.0.0.0 reaches the local host on Linux
  cidr('10.0.0.0/8', 'private'),
  cidr('100.64.0.0/10', 'shared'),
  cidr('127.0.0.0/8', 'loopback'),
  cidr('169.254.0.0/16', 'link-local'),
  cidr('172.16.0.0/12', 'private'),
  cidr('192.0.0.0/24', 'reserved'), // IETF protocol assignments (DS-Lite, NAT64 discovery, ...)
  cidr('192.0.2.0/24', 'documentation'),
  cidr('192.88.99.0/24', 'reserved'), // 6to4 relay anycast (deprecated)
  cidr('192.168.0.0/16', 'private'),
  cidr('198.18.0.0/15', 'benchmarking'),
  cidr('198.51.100.0/24', 'documentation'),
  cidr('203.0.113.0/24', 'documentation'),
  cidr('224.0.0.0/4', 'multicast'),
  cidr('240.0.0.0/4', 'reserved'),
];

const IPV6_BLOCKED: Cidr[] = [
  cidr('::/128', 'unspecified'),
  cidr('::1/128', 'loopback'),
  cidr('fd00:ec2::254/128', 'metadata'), // AWS instance metadata over IPv6
  cidr('fd00:ec2::253/128', 'metadata'), // AWS DNS
  cidr('fd00:ec2::23/128', 'metadata'), // AWS EKS pod identity
  cidr('fc00::/7', 'unique-local'),
  cidr('fe80::/10', 'link-local'),
  cidr('fec0::/10', 'site-local'),
  cidr('ff00::/8', 'multicast'),
  cidr('2001:db8::/32', 'documentation'),
  cidr('3fff::/20', 'documentation'),
  cidr('2001:2::/48', 'benchmarking'),
  cidr('2001::/23', 'reserved'), // IETF protocol assignments, Teredo, ORCHID
  cidr('64:ff9b:1::/48', 'reserved'), // local-use IPv4/IPv6 translation
  cidr('100::/64', 'reserved'), // discard-only
  cidr('5f00::/16', 'reserved'), // SRv6 SIDs
];

// Everything outside 2000::/3 (global unicast) is unassigned or special; the embedded forms are handled first.
const IPV6_GLOBAL_UNICAST = cidr('2000::/3', 'reserved');
const IPV4_MAPPED = cidr('::ffff:0:0/96', 'reserved');
const NAT64 = cidr('64:ff9b::/96', 'reserved');
const SIX_TO_FOUR = cidr('2002::/16', 'reserved');
const TEREDO = cidr('2001::/32', 'reserved');

function parseIPv4(text: string): Uint8Array | null {
  if (!isIPv4(text)) {
    return null;
  }
  return Uint8Array.from(text.split('.').map(Number));
}

function parseIPv6(text: string): Uint8Array | null {
  if (!isIPv6(text)) {
    return null;
  }
  let groupsText = text;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIPv4(tail);
    if (v4 === null) {
      return null;
    }
    groupsText = `${text.slice(0, lastColon + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const halves = groupsText.split('::');
  const head = halves[0] === '' ? [] : halves[0].split(':');
  const rest = halves.length === 2 ? (halves[1] === '' ? [] : halves[1].split(':')) : [];
  const groups = [...head, ...Array<string>(8 - head.length - rest.length).fill('0'), ...rest];
  if (groups.length !== 8) {
    return null;
  }
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  return bytes;
}

/** The 4 or 16 bytes of a textual IP address (canonical dotted IPv4 or any IPv6 form), or null. */
export function parseIp(text: string): Uint8Array | null {
  return parseIPv4(text) ?? parseIPv6(text);
}

function inCidr(bytes: Uint8Array, block: Cidr): boolean {
  if (bytes.length !== block.bytes.length) {
    return false;
  }
  const whole = block.bits >> 3;
  for (let i = 0; i < whole; i++) {
    if (bytes[i] !== block.bytes[i]) {
      return false;
    }
  }
  const rest = block.bits & 7;
  if (rest === 0) {
    return true;
  }
  const mask = (0xff << (8 - rest)) & 0xff;
  return (bytes[whole] & mask) === (block.bytes[whole] & mask);
}

function classifyIPv4(bytes: Uint8Array): BlockedRange | null {
  return IPV4_BLOCKED.find((block) => inCidr(bytes, block))?.range ?? null;
}

function classifyIPv6(bytes: Uint8Array): BlockedRange | null {
  // IPv6 forms that carry an IPv4 address are judged by that address (the OS or a translator reaches it).
  if (inCidr(bytes, IPV4_MAPPED) || inCidr(bytes, NAT64)) {
    return classifyIPv4(bytes.subarray(12, 16));
  }
  if (inCidr(bytes, SIX_TO_FOUR)) {
    return classifyIPv4(bytes.subarray(2, 6));
  }
  if (inCidr(bytes, TEREDO)) {
    // Server address in clear, client address inverted; either may point inside. Teredo is refused anyway.
    const client = bytes.subarray(12, 16).map((b) => b ^ 0xff);
    return classifyIPv4(bytes.subarray(4, 8)) ?? classifyIPv4(client) ?? 'reserved';
  }
  const blocked = IPV6_BLOCKED.find((block) => inCidr(bytes, block))?.range;
  if (blocked !== undefined) {
    return blocked;
  }
  if (bytes.subarray(0, 12).every((b) => b === 0)) {
    // Deprecated IPv4-compatible form (::a.b.c.d): name the embedded range when it has one.
    return classifyIPv4(bytes.subarray(12, 16)) ?? 'reserved';
  }
  return inCidr(bytes, IPV6_GLOBAL_UNICAST) ? null : 'reserved';
}

/**
 * Classifies a resolved address: the blocked range it falls in, or null when it is publicly routable.
 * Accepts what resolvers return (dotted IPv4, any IPv6 text form); a zone index (`fe80::1%eth0`) or
 * anything unparsable is refused.
 */
export function classifyAddress(address: string): BlockedRange | null {
  if (address.includes('%')) {
    return 'link-local';
  }
  const bytes = parseIp(address);
  if (bytes === null) {
    return 'invalid';
  }
  return bytes.length === 4 ? classifyIPv4(bytes) : classifyIPv6(bytes);
}
