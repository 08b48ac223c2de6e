import { addressKey } from './address-key';

describe('addressKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2::', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::ffff:198.51.100.4', '198.51.100.4'],
    ['::FFFF:c633:6404', '198.51.100.4'],
    ['0:0:0:0:0:ffff:c633:6404', '198.51.100.4'],
    ['64:ff9b::198.51.100.4', '64:ff9b:0:0::/64'],
    ['unknown', 'unknown'],
  ])('counts %s as %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });

  it('gives every address of one /64 the same key and the next /64 another', () => {
    const keys = ['2001:db8:a:b::1', '2001:db8:a:b:ffff::9', '2001:db8:a:b:1:2:3:4'].map(addressKey);
    expect(new Set(keys).size).toBe(1);
    expect(addressKey('2001:db8:a:c::1')).not.toBe(keys[0]);
  });
});
