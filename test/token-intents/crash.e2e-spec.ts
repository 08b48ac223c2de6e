import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Client } from 'pg';
import { postgresUrl } from '../support/databases';
import { FreshStore, freshStore } from '../support/fresh-store';
import { bootVault, ensureBuild, SpawnedServer } from '../support/spawned-server';
import { TEST_MASTER_KEYS } from '../support/test-app';
import { cardData, rule } from '../support/token-factory';

jest.setTimeout(300_000);

const BOOTSTRAP_KEY = 'key_' + '7'.repeat(44);
const onPostgres = postgresUrl() !== null;
const INTENTS_PER_ROUND = 40;
const CONVERTERS = 4;

interface Stored {
  intents: Set<string>;
  /** Tokens by fingerprint: a token made of an intent carries the intent's fingerprint. */
  tokens: Map<string, number>;
}

/** What the database holds, read while no vault runs (the embedded database has one process at a time). */
async function stored(store: FreshStore): Promise<Stored> {
  const intentsSql = 'SELECT id FROM token_intents';
  const tokensSql = 'SELECT fingerprint, count(*)::int AS n FROM tokens GROUP BY fingerprint';
  let intents: { id: string }[];
  let tokens: { fingerprint: string; n: number }[];
  if (onPostgres) {
    const client = new Client({ connectionString: store.env.DATABASE_URL });
    await client.connect();
    try {
      intents = (await client.query<{ id: string }>(intentsSql)).rows;
      tokens = (await client.query<{ fingerprint: string; n: number }>(tokensSql)).rows;
    } finally {
      await client.end();
    }
  } else {
    const db = await PGlite.create(join(store.env.DATA_DIR, 'db', 'pgdata'));
    try {
      intents = (await db.query<{ id: string }>(intentsSql)).rows;
      tokens = (await db.query<{ fingerprint: string; n: number }>(tokensSql)).rows;
    } finally {
      await db.close();
    }
  }
  return {
    intents: new Set(intents.map((r) => r.id)),
    tokens: new Map(tokens.map((r) => [r.fingerprint, r.n])),
  };
}

/**
 * POST /tokens with `token_intent_id` makes the token and deletes the intent in one transaction. The vault is
 * killed (SIGKILL) at a random moment while four clients convert, three rounds in a row: after each restart
 * every intent is either still there with no token made of it, or gone with exactly one token.
 */
describe('token intent conversion across a SIGKILL', () => {
  let store: FreshStore;
  let server: SpawnedServer | null = null;
  let base = '';

  const start = async (): Promise<void> => {
    const env = { VAULT_MASTER_KEYS: TEST_MASTER_KEYS, VAULT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY };
    ({ server, base } = await bootVault({ ...store.env, ...env }));
  };
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    server?.process.kill(signal);
    await server?.exited;
    server = null;
  };
  const post = (path: string, apiKey: string, body: unknown): Promise<Response> =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'BT-API-KEY': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const newApplication = async (body: object): Promise<string> => {
    const res = await post('/applications', BOOTSTRAP_KEY, body);
    expect(res.status).toBe(201);
    return ((await res.json()) as { key: string }).key;
  };

  beforeAll(async () => {
    ensureBuild();
    store = await freshStore({ migrated: true });
  }, 240_000);
  afterAll(async () => {
    await stop('SIGKILL');
    await store?.drop();
  });

  it('leaves every intent unconverted and present, or converted once and gone', async () => {
    await start();
    const page = await newApplication({ name: 'page', type: 'public', permissions: ['token-intent:create'] });
    const backend = await newApplication({
      name: 'backend',
      type: 'private',
      permissions: ['token:create'],
      rules: [rule('/', 'reveal', ['token:create'])],
    });
    /**
     * Every intent made, by id: its fingerprint, and whether it is known converted (a 201 reached the client,
     * or an earlier check found it gone with its token).
     */
    const intents = new Map<string, { fingerprint: string; converted: boolean }>();
    const check = (now: Stored): void => {
      for (const [id, intent] of intents) {
        const state = { present: now.intents.has(id), tokens: now.tokens.get(intent.fingerprint) ?? 0 };
        const gone = !state.present && state.tokens === 1;
        const ok = intent.converted ? gone : gone || (state.present && state.tokens === 0);
        expect({ id, ...state, converted: intent.converted, ok }).toEqual({
          id,
          ...state,
          converted: intent.converted,
          ok: true,
        });
        intent.converted = gone;
      }
    };

    let interrupted = 0;
    /** Conversions sent and not yet answered when the vault was killed, over all rounds. */
    let cutOff = 0;
    for (let round = 1; round <= 3; round++) {
      const queue: string[] = [];
      for (let i = 0; i < INTENTS_PER_ROUND; i++) {
        const res = await post('/token-intents', page, { type: 'card', data: cardData() });
        expect(res.status).toBe(201);
        const { id, fingerprint } = (await res.json()) as { id: string; fingerprint: string };
        intents.set(id, { fingerprint, converted: false });
        queue.push(id);
      }
      let converted = 0;
      let inFlight = 0;
      let killed = false;
      const converter = async (): Promise<void> => {
        for (let id = queue.shift(); id !== undefined && !killed; id = queue.shift()) {
          inFlight++;
          try {
            const res = await post('/tokens', backend, { token_intent_id: id });
            await res.arrayBuffer();
            if (res.status === 201) {
              (intents.get(id) as { converted: boolean }).converted = true;
              converted++;
            }
          } catch {
            // The connection died with the process: nothing is promised for this one.
          } finally {
            inFlight--;
          }
        }
      };
      const converters = Array.from({ length: CONVERTERS }, () => converter());
      // At a random point in the first half, so conversions are still queued and in flight.
      const killAt = randomInt(1, INTENTS_PER_ROUND / 2);
      while (converted < killAt && queue.length > 0) {
        await new Promise((r) => setTimeout(r, 5));
      }
      killed = true;
      interrupted += queue.length === 0 ? 0 : 1;
      cutOff += inFlight;
      await stop('SIGKILL');
      await Promise.all(converters);

      const after = await stored(store);
      check(after);
      await start();
      expect(server?.output()).not.toMatch(/"level":50/);
    }
    expect(interrupted).toBe(3);
    expect(cutOff).toBeGreaterThan(0);

    // Whatever the crashes left unconverted converts once now, and only once.
    for (const [id, intent] of intents) {
      if (!intent.converted) {
        expect((await post('/tokens', backend, { token_intent_id: id })).status).toBe(201);
        expect((await post('/tokens', backend, { token_intent_id: id })).status).toBe(400);
      }
    }
    await stop('SIGTERM');
    const last = await stored(store);
    expect(last.intents.size).toBe(0);
    for (const intent of intents.values()) {
      expect(last.tokens.get(intent.fingerprint)).toBe(1);
    }
  });
});
