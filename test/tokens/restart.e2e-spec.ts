import { FreshStore, freshStore } from '../support/fresh-store';
import { ensureBuild, freePort, spawnServer, SpawnedServer, waitForOutput } from '../support/spawned-server';
import { TEST_MASTER_KEYS, TestContext, TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp, TokensApi } from '../support/token-factory';

/**
 * Token reads and writes are prepared statements. The embedded database is one session that outlives the
 * connections to it: a restarted server (a new connection to the same session) must not collide with the
 * statements an earlier connection prepared there.
 */
describe('tokens across a server restart on the same database', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: TokensApi;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    api = (await tokenApp(ctx, tenant, [rule('/', 'reveal', ['token:create', 'token:read'])])).api;
  });
  afterAll(() => ctx.close());

  const create = (number: string) => api.create({ type: 'card', data: cardData({ number }) }).expect(201);
  const read = (id: string) => api.get(id).expect(200);

  it('creates and reads tokens before and after two restarts', async () => {
    const first = cardData().number;
    const before = await create(first);
    expect((await read(before.body.id)).body.data.number).toBe(first);
    for (let restart = 0; restart < 2; restart++) {
      await ctx.restart();
      const number = cardData().number;
      const after = await create(number);
      expect((await read(after.body.id)).body.data.number).toBe(number);
      expect((await read(before.body.id)).body.data.number).toBe(first);
    }
  });
});

/**
 * The process killed with SIGKILL (the OOM killer, a dying node) while clients write, three times in a row,
 * as a spawned server on a database of its own: the embedded one under DATA_DIR in the embedded run. PGlite
 * writes each commit's WAL into the data folder before it answers (synchronous_commit on), so the operating
 * system holds every acknowledged write when the process dies; README notes say what a power loss may cost.
 */
describe('tokens across a SIGKILL of the server, three times in a row', () => {
  const KEY = 'key_' + '6'.repeat(44);
  let store: FreshStore;
  /** Every server this test started, killed at the end whatever happened. */
  const servers: SpawnedServer[] = [];

  beforeAll(async () => {
    ensureBuild();
    store = await freshStore({ migrated: true });
  }, 180_000);
  afterAll(async () => {
    servers.forEach((spawned) => spawned.process.kill('SIGKILL'));
    await Promise.all(servers.map((spawned) => spawned.exited));
    await store?.drop();
  });

  it('boots again without repair and every token whose 201 reached the client is there, data and update included', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      ...store.env,
      PORT: String(port),
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
      VAULT_BOOTSTRAP_API_KEY: KEY,
    };
    const boot = async (): Promise<SpawnedServer> => {
      const spawned = spawnServer(env);
      servers.push(spawned);
      await waitForOutput(spawned, 'Token Vault is running', 60_000);
      return spawned;
    };
    const call = (path: string, key: string, init: RequestInit = {}): Promise<Response> =>
      fetch(`${base}${path}`, {
        ...init,
        headers: {
          'BT-API-KEY': key,
          'Content-Type': init.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
        },
      });
    let running = await boot();
    const app = (await (
      await call('/applications', KEY, {
        method: 'POST',
        body: JSON.stringify({
          name: 'load',
          type: 'private',
          permissions: ['token:create', 'token:read', 'token:update'],
          rules: [rule('/', 'reveal', ['token:create', 'token:read', 'token:update'])],
        }),
      })
    ).json()) as { key: string };

    /** id -> what its data may be: its last acknowledged write's, or an update whose answer was lost. */
    const acknowledged = new Map<string, string[]>();
    let updates = 0;
    for (let crash = 1; crash <= 3; crash++) {
      let stop = false;
      const writer = async (w: number): Promise<void> => {
        for (let i = 0; !stop; i++) {
          const data = `crash ${crash} writer ${w} value ${i}`;
          try {
            const res = await call('/tokens', app.key, {
              method: 'POST',
              body: JSON.stringify({ type: 'token', data }),
            });
            if (res.status !== 201) {
              continue;
            }
            const { id } = (await res.json()) as { id: string };
            acknowledged.set(id, [data]);
            // Every fifth token is updated too: an acknowledged update must survive as well.
            if (i % 5 === 0) {
              const updated = `${data} updated`;
              acknowledged.set(id, [data, updated]);
              const patch = await call(`/tokens/${id}`, app.key, {
                method: 'PATCH',
                body: JSON.stringify({ data: updated }),
              });
              if (patch.status === 200) {
                acknowledged.set(id, [updated]);
                updates++;
              }
            }
          } catch {
            // The connection died with the process: not acknowledged, nothing is promised.
          }
        }
      };
      const writers = Array.from({ length: 4 }, (_, w) => writer(w));
      const before = acknowledged.size;
      while (acknowledged.size < before + 40) {
        await new Promise((r) => setTimeout(r, 20));
      }
      running.process.kill('SIGKILL');
      await running.exited;
      stop = true;
      await Promise.all(writers);

      running = await boot();
      expect(running.output()).not.toMatch(/"level":50/);
      for (const [id, allowed] of acknowledged) {
        const res = await call(`/tokens/${id}`, app.key);
        expect({ id, status: res.status }).toEqual({ id, status: 200 });
        const { data } = (await res.json()) as { data: string };
        expect(allowed).toContain(data);
        // The next crash round asks only for what is now known to be stored.
        acknowledged.set(id, [data]);
      }
    }
    expect(updates).toBeGreaterThan(0);
    running.process.kill('SIGTERM');
    await running.exited;
  }, 300_000);
});
