import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config/app-config';
import { openDatabase } from '../../src/database/database';
import { postgresUrl } from '../support/databases';
import { DisposablePostgres } from '../support/disposable-postgres';
import { TcpRelay } from '../support/tcp-relay';
import { TestApplication, TestContext, TestTenant } from '../support/test-app';

/**
 * Two replicas on a PostgreSQL server of their own; replica A listens for changes through a relay the test
 * can cut (DATABASE_LISTEN_URL), its queries go direct. PostgreSQL run only (see database-outage).
 */
const describeOnPostgres = postgresUrl() === null ? describe.skip : describe;

/** How long the application cache trusts an entry (application-cache.ts): the bound without invalidation. */
const CACHE_TTL_MS = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function replica(env: Record<string, string>): Promise<TestContext> {
  const database = await openDatabase(loadConfig({ ...env, LOG_LEVEL: 'silent' }));
  return TestContext.create({ env, database });
}

describeOnPostgres('a replica whose change listener lost its connection (own PostgreSQL server)', () => {
  let pg: DisposablePostgres;
  let relay: TcpRelay;
  let a: TestContext;
  let b: TestContext;
  let tenant: TestTenant;
  let app: TestApplication;

  /** 404 (an unknown token) while the key is honoured, 401 once it is not. */
  const answer = async (ctx: TestContext, key: string): Promise<number> =>
    (await ctx.http.get(`/tokens/${randomUUID()}`).set('BT-API-KEY', key)).status;
  const keyAnswer = (ctx: TestContext): Promise<number> => answer(ctx, app.key);

  beforeAll(async () => {
    pg = await DisposablePostgres.start();
    relay = await TcpRelay.start(pg.port);
    a = await replica({ DATABASE_URL: pg.url, DATABASE_LISTEN_URL: relay.urlFor(pg.url) });
    b = await replica({ DATABASE_URL: pg.url });
    tenant = await a.newTenant();
    app = await a.newApplication(tenant, 'private', ['token:read']);
  }, 120_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await relay?.close();
    await pg?.destroy();
  });

  it('listens again once the database is reachable and forgets what changed meanwhile', async () => {
    relay.refuse();
    // Longer than one retry: the listener used to try once and then never listen again.
    await sleep(3000);
    expect(await keyAnswer(a)).toBe(404);
    // Another replica deletes the application while nobody can tell replica A.
    await b.http.delete(`/applications/${app.id}`).set('BT-API-KEY', tenant.key).expect(204);
    expect(await keyAnswer(b)).toBe(401);
    expect(await keyAnswer(a)).toBe(404);

    relay.accept();
    const since = Date.now();
    while ((await keyAnswer(a)) !== 401) {
      expect(Date.now() - since).toBeLessThan(CACHE_TTL_MS);
      await sleep(100);
    }
    // Re-subscribing dropped the cache: well before the entry would have expired by itself.
    expect(Date.now() - since).toBeLessThan(CACHE_TTL_MS - 3000);
    expect(a.logs.join('\n')).toContain('change listener lost; reconnecting');
  });

  it('invalidates through notifications again after the reconnect', async () => {
    const other = await a.newApplication(tenant, 'private', ['token:read']);
    expect(await answer(a, other.key)).toBe(404);
    await b.http.delete(`/applications/${other.id}`).set('BT-API-KEY', tenant.key).expect(204);
    const since = Date.now();
    while ((await answer(a, other.key)) !== 401) {
      expect(Date.now() - since).toBeLessThan(2000);
      await sleep(20);
    }
  });
});
