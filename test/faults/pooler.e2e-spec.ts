import { randomUUID } from 'node:crypto';
import { JobRunner } from '../../src/jobs/job-runner';
import { postgresUrl } from '../support/databases';
import { DisposablePostgres } from '../support/disposable-postgres';
import { PgBouncer, pgbouncerInstalled } from '../support/pgbouncer';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import { TestApplication, TestContext, TestTenant } from '../support/test-app';
import { cardNumber, tokenApp, TokensApi } from '../support/token-factory';

/**
 * Two replicas behind Debian's PgBouncer in transaction mode, in front of a PostgreSQL server of the test's
 * own: what most managed PostgreSQL setups look like. Consecutive transactions of one client land on
 * different server connections, so session state (LISTEN, prepared statements, session locks) does not
 * carry over. PostgreSQL run only; .ci/run installs pgbouncer.
 */
const describeBehindPooler = postgresUrl() === null ? describe.skip : describe;

/** How long caches keep an entry while notifications arrive: what revocation would take without the fallback. */
const CACHE_TTL_MS = 10_000;
/** The fallback lifetime (1 s) plus a busy machine's slack, well under CACHE_TTL_MS. */
const REVOKED_WITHIN_MS = 3000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describeBehindPooler('two replicas behind PgBouncer in transaction mode', () => {
  let pg: DisposablePostgres;
  let bouncer: PgBouncer;
  let a: TestContext;
  let b: TestContext;
  let tenant: TestTenant;

  beforeAll(async () => {
    if (!pgbouncerInstalled()) {
      throw new Error('pgbouncer is not installed (apt-get install pgbouncer; .ci/run does)');
    }
    pg = await DisposablePostgres.start();
    bouncer = await PgBouncer.start(pg.port);
    const env = { DATABASE_URL: bouncer.url, DATABASE_PREPARED_STATEMENTS: 'false' };
    a = await TestContext.onOwnServer(env);
    b = await TestContext.onOwnServer(env);
    tenant = await a.newTenant();
  }, 120_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await bouncer?.stop();
    await pg?.destroy();
  });

  /** 404 (an unknown token) while the key is honoured, 401 once it is not. */
  const answer = async (ctx: TestContext, key: string): Promise<number> =>
    (await ctx.http.get(`/tokens/${randomUUID()}`).set('BT-API-KEY', key)).status;

  it('notices that notifications do not arrive, and says so on /health/ready without leaving the rotation', async () => {
    const res = await a.http.get('/health/ready').expect(200);
    expect(res.body.checks.notifications).toBe('degraded');
    expect(res.body.degraded.notifications).toMatch(/DATABASE_LISTEN_URL/);
    expect(a.logs.join('\n')).toMatch(
      /change notifications sent through DATABASE_URL do not reach the listener/,
    );
  });

  it('stops honouring a deleted key on the other replica within about a second', async () => {
    const app: TestApplication = await a.newApplication(tenant, 'private', ['token:read']);
    expect(await answer(a, app.key)).toBe(404);
    expect(await answer(b, app.key)).toBe(404);
    await b.http.delete(`/applications/${app.id}`).set('BT-API-KEY', tenant.key).expect(204);
    const since = Date.now();
    while ((await answer(a, app.key)) !== 401) {
      expect(Date.now() - since).toBeLessThan(CACHE_TTL_MS);
      await sleep(20);
    }
    expect(Date.now() - since).toBeLessThan(REVOKED_WITHIN_MS);
  });

  it('serves tokens, tokenize, search and reactors through the pooler, across both replicas', async () => {
    const onA: TokensApi = (
      await tokenApp(a, tenant, [], ['token:create', 'token:read', 'token:search', 'token:use'])
    ).api;
    const user = await tokenApp(b, tenant, [], ['token:create', 'token:read', 'token:search', 'token:use']);
    for (let i = 0; i < 20; i++) {
      // Many short transactions: each may run on another server connection of the pooler.
      const number = cardNumber();
      const created = await onA
        .create({ type: 'card', data: { number, expiration_month: 12, expiration_year: 2040 } })
        .expect(201);
      const read = await user.api.get(created.body.id as string).expect(200);
      expect(read.body.id).toBe(created.body.id);
      expect(String(read.body.data.number).slice(-4)).toBe(number.slice(-4));
    }
    const tokenized = await user.api.tokenize({ a: { type: 'token', data: 'x' }, b: 'plain' }).expect(200);
    await onA.get(tokenized.body.a.id as string).expect(200);
    await onA.get(tokenized.body.b as string).expect(200);
    const found = await user.api.search({ query: `type:card` }).expect(200);
    expect(found.body.pagination.total_items).toBeGreaterThanOrEqual(20);
    const { reactorId } = await newReactor(b, tenant);
    await reactorsApi(a, tenant).react(reactorId, { args: {} }, user.key).expect(200);
  });

  it('left with named prepared statements on, answers a few 503s at worst (never a 500), then sends them unnamed', async () => {
    const c = await TestContext.onOwnServer({ DATABASE_URL: bouncer.url });
    try {
      const api = (await tokenApp(c, tenant, [], ['token:create', 'token:read'])).api;
      const statuses: number[] = [];
      // Concurrent requests spread the pool's connections over the pooler's server connections.
      for (let round = 0; round < 10; round++) {
        const created = await Promise.all(
          Array.from({ length: 4 }, () => api.create({ type: 'token', data: `round ${round}` })),
        );
        statuses.push(...created.map((res) => res.status));
        const read = await Promise.all(
          created.filter((res) => res.status === 201).map((res) => api.get(res.body.id as string)),
        );
        statuses.push(...read.map((res) => res.status));
      }
      expect(statuses.filter((status) => ![200, 201, 503].includes(status))).toEqual([]);
      expect(statuses.filter((status) => status === 503).length).toBeLessThanOrEqual(4);
      if (statuses.includes(503)) {
        expect(c.logs.join('\n')).toContain('Set DATABASE_PREPARED_STATEMENTS=false');
      }
    } finally {
      await c.close();
    }
  });

  it('runs a scheduled job once across the replicas and frees its lock for the next tick', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = a.get(JobRunner).runExclusive('pooled', () => held);
    await sleep(200);
    expect(await b.get(JobRunner).runExclusive('pooled', () => Promise.resolve())).toBe(false);
    release();
    expect(await first).toBe(true);
    // A session lock would have stayed on whichever server connection took it.
    for (let i = 0; i < 5; i++) {
      expect(await b.get(JobRunner).runExclusive('pooled', () => Promise.resolve())).toBe(true);
      expect(await a.get(JobRunner).runExclusive('pooled', () => Promise.resolve())).toBe(true);
    }
  });
});
