import type { Response } from 'supertest';
import { DataSource } from 'typeorm';
import { toProblem } from '../../src/common/to-problem';
import { dataSourceOptions } from '../../src/database/database';
import { postgresUrl } from '../support/databases';
import { DisposablePostgres } from '../support/disposable-postgres';
import { expectProblem } from '../support/problems';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import { TcpRelay } from '../support/tcp-relay';
import { TestContext, TestTenant } from '../support/test-app';
import { cardNumber, countTokens, tokenApp, TokensApi } from '../support/token-factory';

/**
 * Fault tests stop, kill and cut a PostgreSQL server of their own (DisposablePostgres), never the shared
 * one. They run in the PostgreSQL run of the suite only (DATABASE_URL set): CI runs the suite once per
 * database, and the embedded database lives in the process, with no outage to survive.
 */
const describeOnPostgres = postgresUrl() === null ? describe.skip : describe;

const CONNECT_TIMEOUT_MS = 1000;
/** A request during an outage answers within the connect timeout; the rest is a busy machine's slack. */
const FAIL_FAST_MS = CONNECT_TIMEOUT_MS + 3000;
const RECOVERY_MS = 10_000;
const METRICS_TOKEN = 'operator-metrics-token-0123456789abcdef';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The real application on `url`, its pool bounded by CONNECT_TIMEOUT_MS as DATABASE_CONNECT_TIMEOUT_MS says. */
async function vaultOn(url: string, extraEnv: Record<string, string> = {}): Promise<TestContext> {
  const env = {
    DATABASE_URL: url,
    DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
    METRICS_TOKEN,
    ...extraEnv,
  };
  return TestContext.onOwnServer(env);
}

function expectUnavailable(res: Response, elapsedMs: number): void {
  expectProblem(res, 503);
  expect(res.headers['retry-after']).toBe('5');
  expect(res.body.detail).toBe('The database is not available right now: try again shortly.');
  expect(elapsedMs).toBeLessThan(FAIL_FAST_MS);
}

async function timed(call: () => Promise<Response>): Promise<{ res: Response; ms: number }> {
  const started = Date.now();
  const res = await call();
  return { res, ms: Date.now() - started };
}

/** Calls `call` until it answers `status`; how long that took after `since`. */
async function servedAgain(call: () => Promise<Response>, status: number, since: number): Promise<number> {
  for (;;) {
    const res = await call();
    if (res.status === status) {
      return Date.now() - since;
    }
    if (Date.now() - since > RECOVERY_MS + 5000) {
      throw new Error(`still ${res.status} ${JSON.stringify(res.body)} after ${Date.now() - since} ms`);
    }
    await sleep(200);
  }
}

async function metric(ctx: TestContext, name: string): Promise<number> {
  const text = (await ctx.http.get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200))
    .text;
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  if (match === null) {
    throw new Error(`${name} not on /metrics`);
  }
  return Number(match[1]);
}

describeOnPostgres('a database outage (own PostgreSQL server)', () => {
  let pg: DisposablePostgres;
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: TokensApi;
  let reactorId: string;
  let reactorKey: string;
  const card = { number: cardNumber() };
  let cardId: string;
  const unhandled: unknown[] = [];
  const noteUnhandled = (reason: unknown): void => void unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', noteUnhandled);
    pg = await DisposablePostgres.start();
    // The scheduled jobs run, the purge every second: their ticks during the outage must not end the process.
    ctx = await vaultOn(pg.url, { JOBS_ENABLED: 'true', PURGE_CRON: '* * * * * *' });
    tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant, [], ['token:create', 'token:read', 'token:search', 'token:use']);
    api = app.api;
    reactorKey = app.key;
    reactorId = (await newReactor(ctx, tenant)).reactorId;
    cardId = (
      await api.create({ type: 'card', data: card, search_indexes: ['{{ data.number }}'] }).expect(201)
    ).body.id as string;
  }, 180_000);

  afterAll(async () => {
    process.off('unhandledRejection', noteUnhandled);
    await ctx?.close();
    await pg?.destroy();
  });

  /** One request of every kind the vault serves from the database, and the status it answers when well. */
  const paths = (): [string, number, () => Promise<Response>][] => [
    ['create', 201, () => api.create({ type: 'token', data: 'written during the outage?' })],
    ['read', 200, () => api.get(cardId)],
    ['tokenize', 200, () => api.tokenize({ a: { type: 'token', data: 'x' }, b: 'y' })],
    ['search', 200, () => api.search({ query: `data:${card.number}` })],
    ['react', 200, () => reactorsApi(ctx, tenant).react(reactorId, { args: {} }, reactorKey)],
  ];

  it('answers 503 with Retry-After through a 15 s outage, stays alive, and serves every path within 10 s after', async () => {
    // The sandbox starts on first use: start it before the outage, so recovery times the database alone.
    await reactorsApi(ctx, tenant).react(reactorId, { args: {} }, reactorKey).expect(200);
    const reconnectsBefore = await metric(ctx, 'token_vault_db_reconnects_total');
    // Expires during the outage: the first purge tick after it must remove its data.
    const expiring = (
      await api
        .create({
          type: 'token',
          data: 'expires meanwhile',
          expires_at: new Date(Date.now() + 3000).toISOString(),
        })
        .expect(201)
    ).body.id as string;
    const purgedBefore = await metric(ctx, 'token_vault_purged_tokens_total');
    const rowsBefore = await countTokens(ctx);

    await pg.pause('immediate');
    const outageStarted = Date.now();
    let rounds = 0;
    while (Date.now() - outageStarted < 15_000) {
      for (const [, , call] of paths()) {
        const { res, ms } = await timed(call);
        expectUnavailable(res, ms);
      }
      const ready = await timed(() => ctx.http.get('/health/ready'));
      expectProblem(ready.res, 503, ['database']);
      expect(ready.res.body.detail).toMatch(/^Not ready: database\b/);
      expect(ready.ms).toBeLessThan(FAIL_FAST_MS);
      await ctx.http.get('/health/live').expect(200, { status: 'ok' });
      expect((await ctx.http.get('/health').expect(200)).body.status).toBe('ok');
      rounds++;
      await sleep(1000);
    }
    expect(rounds).toBeGreaterThanOrEqual(5);
    expect(await metric(ctx, 'token_vault_db_reachable')).toBe(0);
    // Each failed tick is one line naming the job and the cause, and the next tick tries again.
    const tickFailures = ctx.logs.filter((line) => line.includes('job purge failed'));
    expect(tickFailures.length).toBeGreaterThanOrEqual(5);
    expect(tickFailures[0]).toMatch(/job purge failed: \w+/);

    await pg.resume();
    const resumed = Date.now();
    for (const [name, status, call] of paths()) {
      const after = await servedAgain(call, status, resumed);
      expect({ name, after: after < RECOVERY_MS }).toEqual({ name, after: true });
    }
    await ctx.http.get('/health/ready').expect(200);
    expect(await metric(ctx, 'token_vault_db_reachable')).toBe(1);
    expect(await metric(ctx, 'token_vault_db_reconnects_total')).toBeGreaterThan(reconnectsBefore);
    // The scheduled purge works again without a restart.
    while ((await metric(ctx, 'token_vault_purged_tokens_total')) === purgedBefore) {
      expect(Date.now() - resumed).toBeLessThan(RECOVERY_MS + 5000);
      await sleep(200);
    }
    await api.get(expiring).expect(404);

    // Nothing half-written: exactly the tokens of the writes answered 201/200 after recovery (create: 1,
    // tokenize: 2), none of the ones answered 503.
    expect(await countTokens(ctx)).toBe(rowsBefore + 3);
    expect(ctx.logs.join('')).not.toContain('unhandled error');
    expect(unhandled).toEqual([]);
  }, 120_000);

  it('recovers when every connection is killed, even under requests: at worst a 503, then served', async () => {
    await api.get(cardId).expect(200);
    const inFlight = Promise.all(
      Array.from({ length: 3 }, () =>
        paths().map(([name, status, call]) => call().then((res) => ({ name, status, res }))),
      ).flat(),
    );
    expect(await pg.killConnections()).toBeGreaterThan(0);
    for (const { name, status, res } of await inFlight) {
      if (res.status === 503) {
        expect(res.headers['retry-after']).toBe('5');
      } else {
        expect({ name, status: res.status }).toEqual({ name, status });
      }
    }
    const rowsBefore = await countTokens(ctx);
    for (const [name, status, call] of paths()) {
      expect({ name, status: (await call()).status }).toEqual({ name, status });
    }
    // create: 1 token, tokenize: 2.
    expect(await countTokens(ctx)).toBe(rowsBefore + 3);
    await ctx.http.get('/health/ready').expect(200);
    expect(ctx.logs.join('')).not.toContain('unhandled error');
    expect(unhandled).toEqual([]);
  }, 60_000);
});

describeOnPostgres('a transaction whose connection is killed between statements', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('maps to the 503 of a lost database (TypeORM released its runner), not a 500', async () => {
    const failure = await ctx.dataSource.manager
      .transaction(async (manager) => {
        const [{ pid }] = await manager.query<{ pid: number }[]>('SELECT pg_backend_pid() AS pid');
        await ctx.dataSource.query('SELECT pg_terminate_backend($1)', [pid]);
        await sleep(200);
        await manager.query('SELECT 1');
      })
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(failure).not.toBeNull();
    expect(toProblem(failure)).toMatchObject({ status: 503 });
  });
});

describeOnPostgres('a network partition (connects hang)', () => {
  let pg: DisposablePostgres;
  let relay: TcpRelay;
  let ctx: TestContext;
  let api: TokensApi;
  let tokenId: string;

  beforeAll(async () => {
    pg = await DisposablePostgres.start();
    relay = await TcpRelay.start(pg.port);
    ctx = await vaultOn(relay.urlFor(pg.url));
    const tenant = await ctx.newTenant();
    api = (await tokenApp(ctx, tenant, [], ['token:create', 'token:read'])).api;
    tokenId = (await api.create({ type: 'token', data: 'before' }).expect(201)).body.id as string;
  }, 180_000);

  afterAll(async () => {
    await ctx?.close();
    await relay?.close();
    await pg?.destroy();
  });

  it('answers 503 within about the connect timeout, never hangs, and serves again once the network heals', async () => {
    const rowsBefore = await countTokens(ctx);
    relay.blackhole();
    for (const call of [() => api.get(tokenId), () => api.create({ type: 'token', data: 'during' })]) {
      const { res, ms } = await timed(call);
      expectUnavailable(res, ms);
    }
    const ready = await timed(() => ctx.http.get('/health/ready'));
    expectProblem(ready.res, 503, ['database']);
    expect(ready.ms).toBeLessThan(FAIL_FAST_MS);
    await ctx.http.get('/health/live').expect(200);

    relay.accept();
    const healed = Date.now();
    expect(await servedAgain(() => api.get(tokenId), 200, healed)).toBeLessThan(RECOVERY_MS);
    await api.create({ type: 'token', data: 'after' }).expect(201);
    expect(await countTokens(ctx)).toBe(rowsBefore + 1);
  }, 60_000);
});

describeOnPostgres('a statement slower than DATABASE_STATEMENT_TIMEOUT_MS', () => {
  it('is cancelled by PostgreSQL and answered as a 503, freeing its pooled connection', async () => {
    const dataSource = new DataSource(dataSourceOptions({ url: postgresUrl() ?? '' }, 1, false, 1000, 200));
    await dataSource.initialize();
    try {
      const failure = await dataSource.query('SELECT pg_sleep(5)').then(
        () => null,
        (err: unknown) => err,
      );
      expect((failure as { driverError?: { code?: string } }).driverError?.code).toBe('57014');
      expect(toProblem(failure)).toMatchObject({ status: 503 });
      // The pool's one connection serves the next statement.
      expect(await dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await dataSource.destroy();
    }
  });
});
