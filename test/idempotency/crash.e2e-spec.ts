import { randomUUID } from 'node:crypto';
import { FreshStore, freshStore } from '../support/fresh-store';
import { bootVault, ensureBuild, SpawnedServer, waitForOutput } from '../support/spawned-server';
import { TEST_MASTER_KEYS } from '../support/test-app';

jest.setTimeout(300_000);

const BOOTSTRAP_KEY = 'key_' + '5'.repeat(44);
/** A retry after the restart answers within this long: no claim of the dead process stands in its way. */
const RETRY_WITHIN_MS = 5000;

/**
 * Exactly once across a crash (issue 38 item 2): a keyed write killed with SIGKILL after its claim, after its
 * work, after its answer was sealed to go with the COMMIT, or after the COMMIT but before the answer was
 * sent, then retried with the same key once the vault is back, answers at once and leaves exactly one token
 * (or application): the claim, the work and the answer commit together, so the crash left all of them or
 * none.
 */
describe('BT-IDEMPOTENCY-KEY across a SIGKILL', () => {
  let store: FreshStore;
  let server: SpawnedServer | null = null;
  let base = '';
  let writer = '';

  const start = async (env: Record<string, string> = {}): Promise<void> => {
    ({ server, base } = await bootVault({
      ...store.env,
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
      VAULT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
      ...env,
    }));
  };
  const kill = async (): Promise<void> => {
    server?.process.kill('SIGKILL');
    await server?.exited;
    server = null;
  };
  const post = (path: string, apiKey: string, body: unknown, idempotencyKey?: string): Promise<Response> =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: {
        'BT-API-KEY': apiKey,
        'content-type': 'application/json',
        ...(idempotencyKey === undefined ? {} : { 'BT-IDEMPOTENCY-KEY': idempotencyKey }),
      },
      body: JSON.stringify(body),
    });
  const list = async (path: string, apiKey: string): Promise<unknown[]> => {
    const res = await fetch(`${base}${path}`, { headers: { 'BT-API-KEY': apiKey } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as unknown[] | { data: unknown[] };
    return Array.isArray(body) ? body : body.data;
  };

  /** Sends the keyed write to a vault that stops at `point`, kills it there, restarts it and retries. */
  const crashAndRetry = async (
    point: string,
    path: string,
    apiKey: string,
    body: unknown,
  ): Promise<{ status: number; ms: number }> => {
    const key = randomUUID();
    await start({ TEST_IDEMPOTENCY_PAUSE_AT: point });
    const lost = post(path, apiKey, body, key).catch(() => null);
    await waitForOutput(server as SpawnedServer, `paused at ${point}`);
    await kill();
    expect(await lost).toBeNull();
    await start();
    const began = Date.now();
    const retried = await post(path, apiKey, body, key);
    const ms = Date.now() - began;
    await retried.arrayBuffer();
    // The retry of the retry is the kept answer: the key is settled.
    const again = await post(path, apiKey, body, key);
    expect({ status: again.status, replayed: again.headers.get('idempotent-replayed') }).toEqual({
      status: retried.status,
      replayed: 'true',
    });
    await kill();
    return { status: retried.status, ms };
  };

  beforeAll(async () => {
    ensureBuild();
    store = await freshStore({ migrated: true });
    await start();
    const app = await post('/applications', BOOTSTRAP_KEY, {
      name: 'writer',
      type: 'private',
      permissions: ['token:create', 'token:read'],
    });
    expect(app.status).toBe(201);
    writer = ((await app.json()) as { key: string }).key;
    await kill();
  }, 240_000);
  afterAll(async () => {
    await kill();
    await store.drop();
  });

  let tokens = 0;
  it.each(['claimed', 'worked', 'answered', 'committed'])(
    'POST /tokens killed %s: the retry answers 201 at once and there is exactly one token',
    async (point) => {
      const retried = await crashAndRetry(point, '/tokens', writer, { type: 'token', data: `lost ${point}` });
      expect(retried.status).toBe(201);
      expect(retried.ms).toBeLessThan(RETRY_WITHIN_MS);
      tokens += 1;
      await start();
      expect(await list('/v2/tokens', writer)).toHaveLength(tokens);
      await kill();
    },
  );

  it('POST /applications (a management write) killed after its work: exactly one application', async () => {
    await start();
    const before = (await list('/applications', BOOTSTRAP_KEY)).length;
    await kill();
    const body = { name: 'crash-once', type: 'private', permissions: ['token:read'] };
    const retried = await crashAndRetry('worked', '/applications', BOOTSTRAP_KEY, body);
    expect(retried.status).toBe(201);
    expect(retried.ms).toBeLessThan(RETRY_WITHIN_MS);
    await start();
    expect(await list('/applications', BOOTSTRAP_KEY)).toHaveLength(before + 1);
  });
});
