import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientAddressKey, effectiveMaxConnections, openFilesLimit } from './server-limits';

describe('clientAddressKey', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::ffff:7f00:1', '127.0.0.1'],
    ['2001:db8:1:2:3:4:5:6', '20010db800010002/64'],
    ['2001:db8:1:2::ffff', '20010db800010002/64'],
    ['::1', '0000000000000000/64'],
    [undefined, 'unknown'],
  ])('counts %s as %s', (address, key) => {
    expect(clientAddressKey(address)).toBe(key);
  });
});

describe('openFilesLimit', () => {
  const file = (text: string): string => {
    const path = join(mkdtempSync(join(tmpdir(), 'limits-')), 'limits');
    writeFileSync(path, text);
    return path;
  };

  it('reads the soft limit from a /proc limits file', () => {
    const text =
      'Limit                     Soft Limit  Hard Limit  Units\nMax open files            1024        524288      files\n';
    expect(openFilesLimit(file(text))).toBe(1024);
  });

  it('is null when unlimited or unreadable', () => {
    expect(openFilesLimit(file('Max open files            unlimited   unlimited   files\n'))).toBeNull();
    expect(openFilesLimit('/nonexistent/limits')).toBeNull();
  });
});

describe('effectiveMaxConnections', () => {
  it('keeps the configured cap when it fits, lowers it when it does not', () => {
    expect(effectiveMaxConnections(10000, null)).toEqual({ max: 10000, lowered: false });
    expect(effectiveMaxConnections(10000, 1048576)).toEqual({ max: 10000, lowered: false });
    expect(effectiveMaxConnections(10000, 1024)).toEqual({ max: 768, lowered: true });
    expect(effectiveMaxConnections(10000, 100)).toEqual({ max: 16, lowered: true });
  });
});
