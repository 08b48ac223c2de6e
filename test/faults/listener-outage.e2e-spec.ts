import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config/app-config';
import { openDatabase } from '../../src/database/database';
import { postgresUrl } from '../support/databases';
import { DisposablePostgres } from '../support/disposable-postgres';
import { createProxy, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TcpRelay } from '../support/tcp-relay';
import { TestApplication, TestContext, TestTenant } from '../support/test-app';

/**
 * Two replicas on a PostgreSQL server of their own; replica A listens for changes through a relay the test
 * can cut (DATABASE_LISTEN_URL), its queries go direct. PostgreSQL run only (see database-outage).
 */
const describeOnPostgres = postgresUrl() === null ? describe.skip : describe;

/** How long the application cache trusts an entry while notifications arrive (application-cache.ts). */
const CACHE_TTL_MS = 10_000;
/** Well under CACHE_TTL_MS: only the short lifetime of an untrusted feed (1 s) plus a busy machine's slack. */
const SHORT_BOUND_MS = 4000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, ok: () => Promise<boolean>, withinMs: number): Promise<number> {
  const since = Date.now();
  while (!(await ok())) {
    if (Date.now() - since > withinMs) {
      throw new Error(`${what}: not after ${withinMs} ms`);
    }
    await sleep(50);
  }
  return Date.now() - since;
}

describeOnPostgres('a replica whose change listener lost its connection (own PostgreSQL server)', () => {
  let pg: DisposablePostgres;
  let relay: TcpRelay;
  let fx: ProxyFixture;
  let a: TestContext;
  let b: TestContext;
  let tenant: TestTenant;
  let app: TestApplication;

  /** 404 (an unknown token) while the key is honoured, 401 once it is not. */
  const answer = async (ctx: TestContext, key: string): Promise<number> =>
    (await ctx.http.get(`/tokens/${randomUUID()}`).set('BT-API-KEY', key)).status;
  const notifications = async (ctx: TestContext): Promise<string> =>
    String((await ctx.http.get('/health/ready').expect(200)).body.checks.notifications);

  beforeAll(async () => {
    pg = await DisposablePostgres.start();
    relay = await TcpRelay.start(pg.port);
    const envA = { DATABASE_URL: pg.url, DATABASE_LISTEN_URL: relay.urlFor(pg.url) };
    fx = await proxyFixture({
      env: envA,
      database: await openDatabase(loadConfig({ ...envA, LOG_LEVEL: 'silent' })),
    });
    a = fx.ctx;
    b = await TestContext.onOwnServer({ DATABASE_URL: pg.url });
    tenant = await a.newTenant();
    app = await a.newApplication(tenant, 'private', ['token:read', 'token:use']);
  }, 120_000);

  afterAll(async () => {
    await fx?.close();
    await b?.close();
    await relay?.close();
    await pg?.destroy();
  });

  it('reports the feed as verified while notifications arrive', async () => {
    expect(await notifications(a)).toBe('ok');
  });

  it('while its listener is down, says so on /health/ready and keeps cached keys for at most about 1 s', async () => {
    relay.refuse();
    await until('degraded', async () => (await notifications(a)) === 'degraded', 5000);
    const ready = await a.http.get('/health/ready').expect(200);
    expect(ready.body.degraded.notifications).toMatch(/reconnecting/);
    expect(await answer(a, app.key)).toBe(404);
    // Another replica deletes the application while nobody can tell replica A.
    await b.http.delete(`/applications/${app.id}`).set('BT-API-KEY', tenant.key).expect(204);
    expect(await answer(b, app.key)).toBe(401);
    const revoked = await until('revoked on A', async () => (await answer(a, app.key)) === 401, CACHE_TTL_MS);
    expect(revoked).toBeLessThan(SHORT_BOUND_MS);
  });

  it('serves a proxy changed on another replica during the outage, and listens again after it', async () => {
    const first = await fx.server((_req, res) => res.end('first'));
    const second = await fx.server((_req, res) => res.end('second'));
    relay.accept();
    await until('listening', async () => (await notifications(a)) === 'ok', 10_000);
    const { id, key } = await createProxy(a, tenant, { destination_url: fx.url(first) });
    const sendable = await a.newApplication(tenant, 'private', ['token:use']);
    const viaA = async (): Promise<string> =>
      (await a.http.post('/proxy').set('BT-PROXY-KEY', key).set('BT-API-KEY', sendable.key).send({})).text;
    expect(await viaA()).toBe('first');

    relay.refuse();
    await b.http
      .put(`/proxies/${id}`)
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'Test proxy', destination_url: fx.url(second) })
      .expect(200);
    relay.accept();
    await until('listening again', async () => (await notifications(a)) === 'ok', 10_000);
    expect(await viaA()).toBe('second');
    expect(a.logs.join('\n')).toContain('change listener lost; reconnecting');
  });

  it('invalidates through notifications again after the reconnect', async () => {
    const other = await a.newApplication(tenant, 'private', ['token:read']);
    expect(await answer(a, other.key)).toBe(404);
    await b.http.delete(`/applications/${other.id}`).set('BT-API-KEY', tenant.key).expect(204);
    await until('revoked on A', async () => (await answer(a, other.key)) === 401, 2000);
  });
});
