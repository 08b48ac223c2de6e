import { BlockedRange, classifyAddress, parseIp } from './address-ranges';

type Case = [address: string, expected: BlockedRange | null];

// Each range: its first address, one inside, its last address, and the neighbours just outside.
const IPV4: Case[] = [
  ['0.0.0.0', 'unspecified'],
  ['0.255.255.255', 'unspecified'],
  ['1.0.0.0', null],
  ['9.255.255.255', null],
  ['10.0.0.0', 'private'],
  ['10.1.2.3', 'private'],
  ['10.255.255.255', 'private'],
  ['11.0.0.0', null],
  ['100.63.255.255', null],
  ['100.64.0.0', 'shared'],
  ['100.100.0.1', 'shared'],
  ['100.127.255.255', 'shared'],
  ['100.128.0.0', null],
  ['126.255.255.255', null],
  ['127.0.0.0', 'loopback'],
  ['127.0.0.1', 'loopback'],
  ['127.1.2.3', 'loopback'],
  ['127.255.255.255', 'loopback'],
  ['128.0.0.0', null],
  ['169.253.255.255', null],
  ['169.254.0.0', 'link-local'],
  ['169.254.1.1', 'link-local'],
  ['169.254.255.255', 'link-local'],
  ['169.255.0.0', null],
  ['172.15.255.255', null],
  ['172.16.0.0', 'private'],
  ['172.20.10.5', 'private'],
  ['172.31.255.255', 'private'],
  ['172.32.0.0', null],
  ['191.255.255.255', null],
  ['192.0.0.0', 'reserved'],
  ['192.0.0.8', 'reserved'],
  ['192.0.0.255', 'reserved'],
  ['192.0.1.0', null],
  ['192.0.2.0', 'documentation'],
  ['192.0.2.255', 'documentation'],
  ['192.0.3.0', null],
  ['192.88.98.255', null],
  ['192.88.99.1', 'reserved'],
  ['192.88.100.0', null],
  ['192.167.255.255', null],
  ['192.168.0.0', 'private'],
  ['192.168.1.1', 'private'],
  ['192.168.255.255', 'private'],
  ['192.169.0.0', null],
  ['198.17.255.255', null],
  ['198.18.0.0', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['198.20.0.0', null],
  ['198.51.99.255', null],
  ['198.51.100.0', 'documentation'],
  ['198.51.100.255', 'documentation'],
  ['198.51.101.0', null],
  ['203.0.112.255', null],
  ['203.0.113.0', 'documentation'],
  ['203.0.113.255', 'documentation'],
  ['203.0.114.0', null],
  ['223.255.255.255', null],
  ['224.0.0.0', 'multicast'],
  ['224.0.0.251', 'multicast'],
  ['239.255.255.255', 'multicast'],
  ['240.0.0.0', 'reserved'],
  ['250.1.2.3', 'reserved'],
  ['255.255.255.254', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  // Cloud metadata endpoints
  ['169.254.169.254', 'metadata'],
  ['169.254.169.253', 'metadata'],
  ['169.254.170.2', 'metadata'],
  ['169.254.170.23', 'metadata'],
  ['100.100.100.200', 'metadata'],
  ['192.0.0.192', 'metadata'],
  // Public addresses
  ['8.8.8.8', null],
  ['1.1.1.1', null],
  ['93.184.216.34', null],
  ['151.101.1.69', null],
];

const IPV6: Case[] = [
  ['::', 'unspecified'],
  ['0:0:0:0:0:0:0:0', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::2', 'unspecified'], // IPv4-compatible 0.0.0.2
  // IPv4-mapped (::ffff:0:0/96), dotted and hex forms
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['0:0:0:0:0:ffff:7f00:0001', 'loopback'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:a00:1', 'private'],
  ['::ffff:172.16.0.1', 'private'],
  ['::ffff:192.168.0.1', 'private'],
  ['::ffff:100.64.0.1', 'shared'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['::ffff:169.254.1.1', 'link-local'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['::ffff:224.0.0.1', 'multicast'],
  ['::ffff:255.255.255.255', 'broadcast'],
  ['::ffff:8.8.8.8', null],
  // IPv4-compatible (deprecated ::a.b.c.d)
  ['::127.0.0.1', 'loopback'],
  ['::7f00:1', 'loopback'],
  ['::10.0.0.1', 'private'],
  ['::169.254.169.254', 'metadata'],
  ['::8.8.8.8', 'reserved'],
  // NAT64 well-known prefix 64:ff9b::/96 and the local-use prefix
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::a00:1', 'private'],
  ['64:ff9b::169.254.169.254', 'metadata'],
  ['64:ff9b::192.168.1.1', 'private'],
  ['64:ff9b::8.8.8.8', null],
  ['64:ff9b:1::1', 'reserved'],
  ['64:ff9b:1::8.8.8.8', 'reserved'],
  // 6to4 2002::/16 embeds an IPv4 address in bits 16-47
  ['2002:7f00:1::', 'loopback'],
  ['2002:a00:1::1', 'private'],
  ['2002:c0a8:101::1', 'private'],
  ['2002:a9fe:a9fe::', 'metadata'],
  ['2002:6440:1::', 'shared'],
  ['2002:808:808::1', null],
  // Teredo 2001::/32: server in bits 32-63, client inverted in the last 32 bits; refused either way
  ['2001:0:7f00:1::', 'loopback'],
  ['2001:0:808:808::80ff:fefe', 'loopback'], // client 127.0.1.1
  ['2001:0:808:808::f5ff:fffe', 'private'], // client 10.0.0.1
  ['2001:0:808:808::5601:5601', 'metadata'], // client 169.254.169.254
  ['2001:0:808:808::f7f7:f7f7', 'reserved'], // client 8.8.8.8, server 8.8.8.8
  // Cloud metadata over IPv6
  ['fd00:ec2::254', 'metadata'],
  ['fd00:ec2::253', 'metadata'],
  ['fd00:ec2::23', 'metadata'],
  // Unique local fc00::/7
  ['fc00::', 'unique-local'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456:789a::1', 'unique-local'],
  ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique-local'],
  ['fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'reserved'],
  // Link-local fe80::/10 and site-local fec0::/10
  ['fe80::', 'link-local'],
  ['fe80::1', 'link-local'],
  ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'link-local'],
  ['fec0::', 'site-local'],
  ['feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'site-local'],
  // Multicast
  ['ff00::', 'multicast'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'multicast'],
  // Documentation, benchmarking, IETF assignments, discard, SRv6
  ['2001:db8::', 'documentation'],
  ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation'],
  ['2001:db9::1', null],
  ['3fff::1', 'documentation'],
  ['3fff:fff:ffff::1', 'documentation'],
  ['3fff:1000::1', null],
  ['2001:2::1', 'benchmarking'],
  ['2001:1::1', 'reserved'],
  ['2001:10::1', 'reserved'],
  ['2001:1ff:ffff::1', 'reserved'],
  ['2001:200::1', null],
  ['100::1', 'reserved'],
  ['100::ffff:ffff:ffff:ffff', 'reserved'],
  ['5f00::1', 'reserved'],
  // Outside global unicast 2000::/3
  ['1fff:ffff::1', 'reserved'],
  ['4000::1', 'reserved'],
  ['e000::1', 'reserved'],
  // Public addresses
  ['2000::1', null],
  ['2001:4860:4860::8888', null],
  ['2606:4700:4700::1111', null],
  ['2a00:1450:4001:82b::200e', null],
];

describe('classifyAddress', () => {
  it.each(IPV4)('IPv4 %s → %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it.each(IPV6)('IPv6 %s → %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
    expect(classifyAddress(address.toUpperCase())).toBe(expected);
  });

  it.each([
    '',
    'localhost',
    'example.com',
    '127.1',
    '2130706433',
    '0x7f.0.0.1',
    '0177.0.0.1',
    '127.0.0.01',
    '127.0.0.1.',
    '256.0.0.1',
    '[::1]',
    ':::1',
    '1::2::3',
    '::ffff:127.0.0.256',
    ' 8.8.8.8',
  ])('refuses what a resolver never returns as an address: %j', (address) => {
    expect(classifyAddress(address)).toBe('invalid');
  });

  it.each(['fe80::1%eth0', 'fe80::1%1', '2001:4860::1%eth0'])('refuses a scoped address %s', (address) => {
    expect(classifyAddress(address)).toBe('link-local');
  });
});

describe('parseIp', () => {
  it('expands every IPv6 notation to the same bytes', () => {
    const expected = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0x7f, 0, 0, 1];
    for (const text of ['::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:7f00:1', '0::ffff:127.0.0.1']) {
      expect(Array.from(parseIp(text) ?? [])).toEqual(expected);
    }
  });

  it('reads IPv4 as four bytes and compressed IPv6 in the middle', () => {
    expect(Array.from(parseIp('192.168.1.254') ?? [])).toEqual([192, 168, 1, 254]);
    expect(Array.from(parseIp('2001:db8::8:800:200c:417a') ?? [])).toEqual([
      0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0x08, 0x08, 0, 0x20, 0x0c, 0x41, 0x7a,
    ]);
  });
});

describe('classifyAddress on sampled addresses', () => {
  // Deterministic pseudo-random bytes (the test must be reproducible).
  let seed = 0x2545f491;
  const nextByte = (): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed & 0xff;
  };
  const inRange = (base: number[], bits: number): number[] =>
    base.map((byte, i) => {
      const fixed = Math.max(0, Math.min(8, bits - i * 8));
      const mask = (0xff << (8 - fixed)) & 0xff;
      return (byte & mask) | (nextByte() & ~mask & 0xff);
    });
  const hex = (a: number, b: number): string => ((a << 8) | b).toString(16);

  // The ranges the issue names, written independently of the table under test.
  const MUST_REFUSE_V4: [number[], number][] = [
    [[0, 0, 0, 0], 8],
    [[10, 0, 0, 0], 8],
    [[100, 64, 0, 0], 10],
    [[127, 0, 0, 0], 8],
    [[169, 254, 0, 0], 16],
    [[172, 16, 0, 0], 12],
    [[192, 0, 2, 0], 24],
    [[192, 168, 0, 0], 16],
    [[198, 18, 0, 0], 15],
    [[198, 51, 100, 0], 24],
    [[203, 0, 113, 0], 24],
    [[224, 0, 0, 0], 4],
    [[240, 0, 0, 0], 4],
  ];

  it.each(MUST_REFUSE_V4)('refuses %j/%i in IPv4 and in every IPv6 form that embeds it', (base, bits) => {
    for (let i = 0; i < 200; i++) {
      const [a, b, c, d] = inRange(base, bits);
      const dotted = `${a}.${b}.${c}.${d}`;
      for (const form of [
        dotted,
        `::ffff:${dotted}`,
        `::ffff:${hex(a, b)}:${hex(c, d)}`,
        `64:ff9b::${dotted}`,
        `2002:${hex(a, b)}:${hex(c, d)}::1`,
        `::${dotted}`,
        `2001:0:${hex(a, b)}:${hex(c, d)}::1`,
        `2001:0:808:808::${hex(a ^ 0xff, b ^ 0xff)}:${hex(c ^ 0xff, d ^ 0xff)}`,
      ]) {
        expect([form, classifyAddress(form)]).not.toEqual([form, null]);
      }
    }
  });

  const MUST_REFUSE_V6: [string, number][] = [
    ['fc00::', 7],
    ['fe80::', 10],
    ['fec0::', 10],
    ['ff00::', 8],
    ['2001:db8::', 32],
    ['100::', 64],
  ];

  it.each(MUST_REFUSE_V6)('refuses %s/%i', (base, bits) => {
    const baseBytes = Array.from(parseIp(base) ?? []);
    for (let i = 0; i < 200; i++) {
      const bytes = inRange(baseBytes, bits);
      const text = Array.from({ length: 8 }, (_, g) => hex(bytes[g * 2], bytes[g * 2 + 1])).join(':');
      expect([text, classifyAddress(text)]).not.toEqual([text, null]);
    }
  });
});
