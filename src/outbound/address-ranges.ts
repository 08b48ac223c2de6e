import ipaddr, { IPv4, IPv6 } from 'ipaddr.js';

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
  block: [IPv4 | IPv6, number];
  range: BlockedRange;
}

function cidr(text: string, range: BlockedRange): Cidr {
  return { block: ipaddr.parseCIDR(text), range };
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
const NAT64 = cidr('64:ff9b::/96', 'reserved');
const SIX_TO_FOUR = cidr('2002::/16', 'reserved');
const TEREDO = cidr('2001::/32', 'reserved');

/**
 * A textual IP address as resolvers return it: canonical dotted IPv4 (ipaddr.js would also read 0x7f.1,
 * 0177.0.0.1 or 2130706433, which no resolver returns, so those stay invalid) or any IPv6 form, without a
 * zone index.
 */
function parseAddress(text: string): IPv4 | IPv6 | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) {
    return ipaddr.IPv4.parse(text);
  }
  const hex = text.includes('%') ? null : withHexTail(text);
  return hex !== null && ipaddr.IPv6.isValid(hex) ? ipaddr.IPv6.parse(hex) : null;
}

/**
 * IPv6 text with a dotted IPv4 tail, rewritten with two hex groups. ipaddr.js reads every `::a.b.c.d` as the
 * IPv4-mapped `::ffff:a.b.c.d`, which would let the deprecated IPv4-compatible form pass as the public IPv4
 * address it embeds; the hex form is parsed exactly.
 */
function withHexTail(text: string): string | null {
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (!tail.includes('.')) {
    return text;
  }
  if (!ipaddr.IPv4.isValidFourPartDecimal(tail)) {
    return null;
  }
  const [a, b, c, d] = ipaddr.IPv4.parse(tail).octets;
  return `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** The 4 or 16 bytes of a textual IP address (canonical dotted IPv4 or any IPv6 form), or null. */
export function parseIp(text: string): Uint8Array | null {
  const address = parseAddress(text);
  return address === null ? null : Uint8Array.from(address.toByteArray());
}

function inCidr(address: IPv4 | IPv6, { block }: Cidr): boolean {
  return address.kind() === block[0].kind() && address.match(block);
}

function ipv4At(bytes: number[]): IPv4 {
  return new ipaddr.IPv4(bytes);
}

function classifyIPv4(address: IPv4): BlockedRange | null {
  return IPV4_BLOCKED.find((block) => inCidr(address, block))?.range ?? null;
}

function classifyIPv6(address: IPv6): BlockedRange | null {
  const bytes = address.toByteArray();
  // IPv6 forms that carry an IPv4 address are judged by that address (the OS or a translator reaches it).
  // ipaddr.js reads the mapped form; NAT64, 6to4 and Teredo embed it where it names no range for.
  if (address.isIPv4MappedAddress() || inCidr(address, NAT64)) {
    return classifyIPv4(ipv4At(bytes.slice(12, 16)));
  }
  if (inCidr(address, SIX_TO_FOUR)) {
    return classifyIPv4(ipv4At(bytes.slice(2, 6)));
  }
  if (inCidr(address, TEREDO)) {
    // Server address in clear, client address inverted; either may point inside. Teredo is refused anyway.
    const client = ipv4At(bytes.slice(12, 16).map((b) => b ^ 0xff));
    return classifyIPv4(ipv4At(bytes.slice(4, 8))) ?? classifyIPv4(client) ?? 'reserved';
  }
  const blocked = IPV6_BLOCKED.find((block) => inCidr(address, block))?.range;
  if (blocked !== undefined) {
    return blocked;
  }
  if (bytes.slice(0, 12).every((b) => b === 0)) {
    // Deprecated IPv4-compatible form (::a.b.c.d): name the embedded range when it has one.
    return classifyIPv4(ipv4At(bytes.slice(12, 16))) ?? 'reserved';
  }
  return inCidr(address, IPV6_GLOBAL_UNICAST) ? null : 'reserved';
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
  const parsed = parseAddress(address);
  if (parsed === null) {
    return 'invalid';
  }
  return parsed.kind() === 'ipv4' ? classifyIPv4(parsed as IPv4) : classifyIPv6(parsed as IPv6);
}
