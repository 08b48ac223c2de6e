import { combineShares, isShare, parseShare, shareDigest, splitMasterKeys } from './shamir';

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

  it('names its split, index and threshold; old tvs1 shares still parse and combine', async () => {
    const shares = await splitMasterKeys(KEYS, 4, 3);
    const parsed = shares.map(parseShare);
    expect(new Set(parsed.map((p) => p?.splitId)).size).toBe(1);
    expect(parsed.map((p) => [p?.index, p?.threshold])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
      [4, 3],
    ]);
    expect(shareDigest(shares[0])).toMatch(/^[0-9a-f]{64}$/);
    const old = shares.map((s) => `tvs1.${s.split('.')[4]}`);
    expect(parseShare(old[0])).toMatchObject({ splitId: '', index: 0 });
    expect((await combineShares(old.slice(1)))?.map((k) => k.id)).toEqual(['new-1', 'old-1']);
    expect(parseShare(`${shares[0]}.x`)).toBeNull();
  });
});
