import { isIP } from 'node:net';

/**
 * The key a client address is counted under by the per-address limits: an IPv4 address as it is, an IPv6
 * address by its /64 prefix (what one subscriber or host is usually given, so walking through the 2^64
 * addresses of one's own prefix gives no fresh allowance), an IPv4-mapped IPv6 address as its IPv4 address.
 * Anything that is not an IP address (an unknown peer) is kept as it is.
 */
export function addressKey(address: string): string {
  const bare = address.split('%')[0];
  if (isIP(bare) !== 6) {
    return address;
  }
  const groups = ipv6Groups(bare);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const [head, tail] = text.split('::');
  if (tail === undefined) {
    return parse(head);
  }
  const left = parse(head);
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
