import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FreshStore, freshStore } from '../support/fresh-store';
import { ensureBuild, freePort, spawnServer, SpawnedServer, waitForOutput } from '../support/spawned-server';
import { TEST_MASTER_KEYS } from '../support/test-app';

jest.setTimeout(180_000);

const ROOT = join(__dirname, '..', '..');
const BOOTSTRAP_KEY = 'key_' + '7'.repeat(44);

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node dist/src/cli.js ...` as an operator runs it, with only `env` and `stdin`. */
function cli(env: Record<string, string>, args: string[], stdin = ''): Promise<CliRun> {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'cli.js'), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/**
 * Dual control from a fresh install on: the README's order (keys:split, then a sealed start on an empty
 * database), then the operator commands that need the master keys, each taking the key holders' shares
 * itself, so the whole master key is never in one environment.
 */
describe('a sealed deployment from its first start', () => {
  let store: FreshStore;
  let shares: string[];
  let server: SpawnedServer | null = null;
  const sealed = (): Record<string, string> => ({ ...store.env, VAULT_SEALED: 'true', LOG_LEVEL: 'error' });

  beforeAll(async () => {
    ensureBuild();
    store = await freshStore({ migrated: true });
  }, 240_000);
  afterAll(async () => {
    server?.process.kill('SIGKILL');
    await server?.exited;
    await store.drop();
  });

  const stop = async (): Promise<void> => {
    server?.process.kill('SIGTERM');
    expect((await server?.exited)?.code).toBe(0);
    server = null;
  };

  it('starts sealed on an empty database and creates the default tenant once unsealed', async () => {
    const split = await cli({ ...store.env, VAULT_MASTER_KEYS: TEST_MASTER_KEYS }, [
      'keys:split',
      '--shares',
      '3',
      '--threshold',
      '2',
    ]);
    expect(split.code).toBe(0);
    shares = split.stdout
      .trim()
      .split('\n')
      .map((l) => l.replace(/^share \d+ of \d+: /, ''));
    expect(shares).toHaveLength(3);

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    server = spawnServer({
      ...sealed(),
      LOG_LEVEL: 'info',
      PORT: String(port),
      VAULT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
    });
    await waitForOutput(server, 'Sealed on a new database', 60_000);
    expect((await fetch(`${base}/health/ready`)).status).toBe(503);
    const unseal = (share: string): Promise<Response> =>
      fetch(`${base}/unseal`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ share }),
      });
    expect((await unseal(shares[0])).status).toBe(200);
    expect(await (await unseal(shares[2])).json()).toEqual({ sealed: false, shares_received: 0 });

    await waitForOutput(server, 'Token Vault is running', 60_000);
    expect((await fetch(`${base}/health/ready`)).status).toBe(200);
    expect(
      (await fetch(`${base}/applications/key`, { headers: { 'BT-API-KEY': BOOTSTRAP_KEY } })).status,
    ).toBe(200);
    expect(server.output()).not.toMatch(/failed to start|"level":50/);
    await stop();
  });

  it('creates a tenant and rotates its key with shares from the key holders, never the whole key', async () => {
    const files = [0, 1].map((i) => {
      const file = join(store.env.DATA_DIR, `holder-${i + 1}.share`);
      writeFileSync(file, `share ${i + 1} of 3: ${shares[i]}\n`, { mode: 0o600 });
      return file;
    });
    const created = await cli({ ...sealed(), VAULT_UNSEAL_SHARE_FILES: files.join(',') }, [
      'tenant:create',
      '--name',
      'Acme',
      '--owner-email',
      'ops@example.com',
      '--json',
    ]);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const tenant = JSON.parse(created.stdout) as { tenant_id: string; key: string };

    // Shares on standard input, one per line (each holder types theirs when prompted at a terminal).
    const rotated = await cli(
      sealed(),
      ['keys:rotate-tenant', '--tenant', tenant.tenant_id],
      `${shares[2]}\n${shares[1]}\n`,
    );
    expect(rotated.stdout).toMatch(/now writes with data key version 2/);
    expect(rotated.code).toBe(0);
    // The audit chain's keys are the tenants' too: verifying a sealed deployment takes the shares as well.
    const verified = await cli(sealed(), ['audit:verify'], `${shares[0]}\n${shares[2]}\n`);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain(`tenant ${tenant.tenant_id}: ok`);
    for (const run of [created, rotated, verified]) {
      expect(run.stdout + run.stderr).not.toMatch(/tvs\d\./);
    }

    // The tenant's keys are wrapped under the real master keys: a vault holding them serves it.
    const port = await freePort();
    server = spawnServer({ ...store.env, PORT: String(port), VAULT_MASTER_KEYS: TEST_MASTER_KEYS });
    await waitForOutput(server, 'Token Vault is running', 60_000);
    const api = `http://127.0.0.1:${port}`;
    const app = await fetch(`${api}/applications`, {
      method: 'POST',
      headers: { 'BT-API-KEY': tenant.key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'writer', type: 'private', permissions: ['token:create', 'token:read'] }),
    });
    expect(app.status).toBe(201);
    const token = await fetch(`${api}/tokens`, {
      method: 'POST',
      headers: {
        'BT-API-KEY': ((await app.json()) as { key: string }).key,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ type: 'token', data: 'secret' }),
    });
    expect(token.status).toBe(201);
    await stop();
  });

  it('refuses, in one line, too few shares or a share that is not of the split', async () => {
    const few = await cli(
      sealed(),
      ['keys:rotate-tenant', '--tenant', crypto.randomUUID()],
      `${shares[0]}\n`,
    );
    expect(few.code).toBe(1);
    expect(few.stderr.trim()).toMatch(
      /^The vault is sealed \(VAULT_SEALED=true\) and the 1 share\(s\) given do not unseal it/,
    );

    const junk = join(store.env.DATA_DIR, 'junk.share');
    writeFileSync(junk, 'tvs2.AAAAAAAAAAAAAAAA.1.2.' + 'A'.repeat(60), { mode: 0o600 });
    const refused = await cli({ ...sealed(), VAULT_UNSEAL_SHARE_FILES: junk }, [
      'tenant:create',
      '--name',
      'Other',
      '--owner-email',
      'ops@example.com',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(/^Unseal share 1 refused: share /);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
  });
});
