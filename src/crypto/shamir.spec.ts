import { combineShares, isShare, splitMasterKeys } from './shamir';

const KEYS = `new-1:${Buffer.alloc(32, 5).toString('base64')},old-1:${Buffer.alloc(32, 6).toString('base64')}`;

describe('Shamir shares of the master keys', () => {
  it('any 3 of 5 shares give the keys back; 2 do not', async () => {
    const shares = await splitMasterKeys(KEYS, 5, 3);
    expect(shares).toHaveLength(5);
    expect(shares.every(isShare)).toBe(true);
    expect(shares.join('')).not.toContain(Buffer.alloc(32, 5).toString('base64'));
    const keys = await combineShares([shares[4], shares[1], shares[2]]);
    expect(keys?.map((k) => k.id)).toEqual(['new-1', 'old-1']);
    expect(keys?.[0].key).toEqual(Buffer.alloc(32, 5));
    expect(await combineShares([shares[0], shares[3]])).toBeNull();
  });

  it('refuses bad parameters and mixed splits', async () => {
    await expect(splitMasterKeys(KEYS, 2, 3)).rejects.toThrow(RangeError);
    await expect(splitMasterKeys('nope', 5, 3)).rejects.toThrow(/master keys/);
    const a = await splitMasterKeys(KEYS, 3, 2);
    const b = await splitMasterKeys(KEYS, 3, 2);
    expect(await combineShares([a[0], b[1]])).toBeNull();
    expect(isShare('tvs1.short')).toBe(false);
  });
});
