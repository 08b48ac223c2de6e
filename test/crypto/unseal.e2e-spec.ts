import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { keysSplit } from '../../src/cli/keys-split';
import { unsealReset } from '../../src/cli/unseal-reset';
import { loadConfig } from '../../src/config/app-config';
import { splitMasterKeys } from '../../src/crypto/shamir';
import { UnsealShares } from '../../src/crypto/unseal-shares.service';
import { expectProblem } from '../support/problems';
import { TEST_MASTER_KEYS, TestContext } from '../support/test-app';
import { ALL_TOKEN_PERMISSIONS, cardData, rule, tokenApp } from '../support/token-factory';

jest.setTimeout(120_000);

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

/** The share with one character of its share bytes changed (same length, same header). */
function altered(share: string): string {
  const at = share.length - 5;
  return share.slice(0, at) + (share[at] === 'A' ? 'B' : 'A') + share.slice(at + 1);
}

/** Runs a CLI command in this process as `npm run cli` would, with `stdin` as its standard input. */
async function cli(command: typeof keysSplit, args: string[], ctx: TestContext, stdin = ''): Promise<string> {
  const lines: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  const input = jest.spyOn(process, 'stdin', 'get').mockReturnValue(Readable.from([stdin]) as never);
  try {
    const url = (ctx.database.options as { url?: string }).url ?? null;
    await command.run(args, { ...ctx.config, databaseUrl: url, databaseListenUrl: url, logLevel: 'silent' });
  } finally {
    write.mockRestore();
    input.mockRestore();
  }
  return lines.join('');
}

describe('dual control: a sealed start and unseal with Shamir shares', () => {
  let ctx: TestContext;
  let restarts = 0;

  /** Restarts sealed; a rate-limit prefix of its own, so counters of earlier restarts (PostgreSQL) never count. */
  const restartSealed = (env: Record<string, string> = {}): Promise<void> =>
    ctx.restart({
      VAULT_SEALED: 'true',
      VAULT_MASTER_KEYS: '',
      RATE_LIMIT_KEY_PREFIX: `unseal-${process.pid}-${++restarts}`,
      ...env,
    });
  /** A split of the test master keys, recorded as keys:split records it. */
  const recordedSplit = async (shares: number, threshold: number): Promise<string[]> => {
    const split = await splitMasterKeys(TEST_MASTER_KEYS, shares, threshold);
    await ctx.get(UnsealShares).record(split);
    return split;
  };
  const give = (share: string) => ctx.http.post('/unseal').send({ share });

  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('answers 503 while sealed; a junk share sent first is refused and the genuine ones unseal', async () => {
    const tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
    const card = cardData();
    const id = (await app.api.create({ type: 'card', data: card }).expect(201)).body.id;
    const shares = await recordedSplit(5, 3);

    await restartSealed();
    const ready = await ctx.http.get('/health/ready').expect(503);
    expect(JSON.stringify(ready.body)).toMatch(/sealed/);
    const read = await app.api.get(id).expect(503);
    expect(read.body.detail).toMatch(/The vault is sealed/);
    await app.api.create({ type: 'card', data: cardData() }).expect(503);

    // What an attacker sends before the key holders: well-formed junk of the genuine length, old and new format.
    const bytes = shares[0].split('.')[4];
    const junk = [
      `tvs1.${randomBytes(Buffer.from(bytes, 'base64url').length).toString('base64url')}`,
      `tvs2.${randomBytes(12).toString('base64url')}.1.3.${bytes}`,
      'not-a-share',
    ];
    for (const share of junk) {
      expectProblem(await give(share), 400);
    }
    expect((await give(shares[3]).expect(200)).body).toEqual({ sealed: true, shares_received: 1 });
    expect((await give(shares[0]).expect(200)).body).toEqual({ sealed: true, shares_received: 2 });
    await app.api.get(id).expect(503);
    expect((await give(shares[4]).expect(200)).body).toEqual({ sealed: false, shares_received: 0 });
    expect((await app.api.get(id).expect(200)).body.data.number).toBe(card.number);
    await ctx.http.get('/health/ready').expect(200);
    expect(ctx.logs.join('\n')).not.toContain(shares[3]);
  });

  it('refuses at once a share of another or a replaced split, and an altered or forged one', async () => {
    const replaced = await recordedSplit(3, 2);
    const current = await recordedSplit(4, 3);
    const foreign = await splitMasterKeys(`other-1:${Buffer.alloc(32, 3).toString('base64')}`, 3, 2);
    await restartSealed();

    const refusals: [string, RegExp][] = [
      [replaced[0], /another split, or a replaced one/],
      [foreign[0], /another split, or a replaced one/],
      [altered(current[1]), /altered, mistyped or forged/],
      [current[1].replace('.2.3.', '.3.3.'), /altered, mistyped or forged/],
      [current[1].replace('.2.3.', '.2.2.'), /index or threshold/],
      [current[1].replace('.2.3.', '.9.3.'), /index or threshold/],
    ];
    for (const [share, detail] of refusals) {
      const res = await give(share);
      expectProblem(res, 400);
      expect(res.body.detail).toMatch(detail);
    }
    // None of them was held: two genuine shares are two, the third unseals.
    expect((await give(current[0]).expect(200)).body.shares_received).toBe(1);
    expect((await give(current[3]).expect(200)).body.shares_received).toBe(2);
    expect((await give(current[1]).expect(200)).body.sealed).toBe(false);
  });

  it('holds one share per index, never more than the threshold less one', async () => {
    const shares = await recordedSplit(5, 3);
    await restartSealed();
    for (let i = 0; i < 4; i++) {
      expect((await give(shares[2]).expect(200)).body).toEqual({ sealed: true, shares_received: 1 });
    }
    expect((await give(shares[0]).expect(200)).body).toEqual({ sealed: true, shares_received: 2 });
    expect((await give(shares[0]).expect(200)).body).toEqual({ sealed: true, shares_received: 2 });
    expect((await give(shares[1]).expect(200)).body).toEqual({ sealed: false, shares_received: 0 });
  });

  it('limits unseal requests per address: 429 with Retry-After, refused shares counted too', async () => {
    const shares = await recordedSplit(3, 2);
    await restartSealed({ RATE_LIMIT_UNSEAL: '3/60' });
    await give('junk').expect(400);
    await give(altered(shares[0])).expect(400);
    await give(shares[0]).expect(200);
    const refused = await give(shares[1]);
    expectProblem(refused, 429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body.detail).toMatch(/unseal requests from this address/);
    expectProblem(await ctx.http.post('/unseal/reset').send({ share: shares[0] }), 429);
    await ctx.http.get('/health/ready').expect(503);
  });

  it('unseal:reset drops the held shares when a key holder asks; no share, no reset', async () => {
    const shares = await recordedSplit(5, 3);
    await restartSealed();
    await ctx.vault.app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(ctx.vault.app.getHttpServer().address() as AddressInfo).port}`;
    await give(shares[0]).expect(200);
    expect((await give(shares[1]).expect(200)).body.shares_received).toBe(2);

    await expect(cli(unsealReset, ['--url', url], ctx, `${altered(shares[4])}\n`)).rejects.toThrow(
      /refused the reset \(400\)/,
    );
    expect((await give(shares[1]).expect(200)).body.shares_received).toBe(2);
    expect(await cli(unsealReset, ['--url', url], ctx, `share 5 of 5: ${shares[4]}\n`)).toBe(
      'Every held share was dropped.\n',
    );
    // Held: none. Two shares are two again, not the threshold with the dropped ones.
    expect((await give(shares[2]).expect(200)).body).toEqual({ sealed: true, shares_received: 1 });
    expect((await give(shares[0]).expect(200)).body).toEqual({ sealed: true, shares_received: 2 });
    expect((await give(shares[3]).expect(200)).body.sealed).toBe(false);
  });

  it('drops every share when they give keys that do not open the tenant keys', async () => {
    const other = await splitMasterKeys(`other-1:${Buffer.alloc(32, 3).toString('base64')}`, 3, 2);
    await ctx.get(UnsealShares).record(other);
    await restartSealed();
    await give(other[0]).expect(200);
    const refused = await give(other[1]).expect(409);
    expect(refused.body.detail).toMatch(/do not open the tenant keys/);
    expect(JSON.stringify(refused.body)).not.toContain(Buffer.alloc(32, 3).toString('base64'));
    await ctx.http.get('/health/ready').expect(503);
    expect((await give(other[0]).expect(200)).body.shares_received).toBe(1);
  });

  onPostgres('keys:split records its split: its shares unseal, an earlier split no longer does', async () => {
    await ctx.restart({});
    const earlier = await recordedSplit(3, 2);
    const printed = await cli(keysSplit, ['--shares', '3', '--threshold', '2'], ctx);
    const shares = printed
      .trim()
      .split('\n')
      .map((line) => line.replace(/^share \d of 3: /, ''));
    expect(shares).toHaveLength(3);
    await restartSealed();
    expect((await give(earlier[0]).expect(400)).body.detail).toMatch(/replaced one/);
    await give(shares[2]).expect(200);
    expect((await give(shares[0]).expect(200)).body.sealed).toBe(false);
  });

  onPostgres('old tvs1 shares are refused; keys:split --from-shares replaces them', async () => {
    const old = (await splitMasterKeys(TEST_MASTER_KEYS, 3, 2)).map((s) => `tvs1.${s.split('.')[4]}`);
    await restartSealed();
    expect((await give(old[0]).expect(400)).body.detail).toMatch(/old format \(tvs1\).*keys:split/);

    const printed = await cli(
      keysSplit,
      ['--shares', '3', '--threshold', '2', '--from-shares'],
      ctx,
      `${old[2]}\n${old[0]}\n`,
    );
    const shares = printed
      .trim()
      .split('\n')
      .map((line) => line.replace(/^share \d of 3: /, ''));
    expect(shares.every((s) => s.startsWith('tvs2.'))).toBe(true);
    // The running sealed vault takes the new split at once.
    await give(shares[1]).expect(200);
    expect((await give(shares[2]).expect(200)).body.sealed).toBe(false);
  });

  it('refuses VAULT_SEALED with VAULT_MASTER_KEYS set, or with the pkcs11 provider', () => {
    expect(() => loadConfig({ VAULT_SEALED: 'true', VAULT_MASTER_KEYS: TEST_MASTER_KEYS })).toThrow(
      /VAULT_SEALED=true needs VAULT_KEY_PROVIDER=env and no VAULT_MASTER_KEYS/,
    );
    expect(() => loadConfig({ VAULT_SEALED: 'true', VAULT_KEY_PROVIDER: 'pkcs11' })).toThrow(/VAULT_SEALED/);
  });
});
