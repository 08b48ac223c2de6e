import { randomUUID } from 'node:crypto';
import request, { type Response } from 'supertest';
import type { VaultApp } from '../../src/app';
import { Clock } from '../../src/common/clock';
import { IdempotencyStore } from '../../src/idempotency/idempotency.store';
import { PurgeService } from '../../src/jobs/purge.service';
import { postgresUrl } from '../support/databases';
import { expectProblem } from '../support/problems';
import { createProxy, expectProxyError, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import { TestClock } from '../support/test-clock';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, countTokens, tokenApp } from '../support/token-factory';

const KEY_HEADER = 'BT-IDEMPOTENCY-KEY';
const DAY_MS = 24 * 60 * 60 * 1000;
const METRICS_TOKEN = 'operator-metrics-token-0123456789abcdef';

/** What a replay must repeat: status, body bytes and the headers that describe the answer. */
function expectSameAnswer(first: Response, again: Response): void {
  expect(again.status).toBe(first.status);
  expect(again.text).toBe(first.text);
  expect(again.headers['content-type']).toBe(first.headers['content-type']);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(first.headers['idempotent-replayed']).toBeUndefined();
}

describe('BT-IDEMPOTENCY-KEY on the vault routes', () => {
  const clock = new TestClock();
  let ctx: TestContext;
  let tenant: TestTenant;
  let app: Awaited<ReturnType<typeof tokenApp>>;

  beforeAll(async () => {
    ctx = await TestContext.create({
      env: { METRICS_TOKEN },
      overrides: [{ provide: Clock, useValue: clock }],
    });
    tenant = await ctx.newTenant();
    app = await tokenApp(
      ctx,
      tenant,
      [],
      ['token:create', 'token:read', 'token:update', 'token:delete', 'token:use'],
    );
  });
  afterAll(() => ctx.close());
  afterEach(() => clock.reset());

  const createWith = (key: string, body: object, apiKey = app.key) =>
    ctx.http.post('/tokens').set('BT-API-KEY', apiKey).set(KEY_HEADER, key).send(body);

  it('replays a retried POST /tokens byte for byte and creates one token', async () => {
    const key = randomUUID();
    const body = { type: 'card', data: cardData() };
    const before = await countTokens(ctx, tenant.tenantId);
    const first = await createWith(key, body).expect(201);
    const again = await createWith(key, body);
    expectSameAnswer(first, again);
    expect(again.headers['bt-trace-id']).not.toBe(first.headers['bt-trace-id']);
    expect(await countTokens(ctx, tenant.tenantId)).toBe(before + 1);
    const metrics = (
      await ctx.http.get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200)
    ).text;
    expect(metrics).toMatch(/^token_vault_idempotent_requests_total\{outcome="stored"\} [1-9]/m);
    expect(metrics).toMatch(/^token_vault_idempotent_requests_total\{outcome="replayed"\} [1-9]/m);
  });

  it('replays /tokenize and a react (whose retry is checked first: disclosures.e2e-spec)', async () => {
    const key = randomUUID();
    const body = { a: { type: 'token', data: 'one' }, b: 'two' };
    const before = await countTokens(ctx, tenant.tenantId);
    const first = await app.api.tokenize(body).set(KEY_HEADER, key).expect(200);
    expectSameAnswer(first, await app.api.tokenize(body).set(KEY_HEADER, key));
    expect(await countTokens(ctx, tenant.tenantId)).toBe(before + 2);

    // A reactor whose answer differs on every run: a replay shows the first run's.
    const code = 'module.exports = async function () { return { raw: { run: Math.random() } }; };';
    const { reactorId } = await newReactor(ctx, tenant, { code });
    const reactKey = randomUUID();
    const react = () =>
      reactorsApi(ctx, tenant).react(reactorId, { args: {} }, app.key).set(KEY_HEADER, reactKey);
    const ran = await react().expect(200);
    expectSameAnswer(ran, await react());
    const unkeyed = await reactorsApi(ctx, tenant).react(reactorId, { args: {} }, app.key).expect(200);
    expect(unkeyed.text).not.toBe(ran.text);
  });

  it('keeps concurrent requests with different keys apart: one token each, each retry gets its own answer', async () => {
    // Arriving together, their claims and records share statements (StatementBatcher).
    const keys = Array.from({ length: 24 }, () => randomUUID());
    const before = await countTokens(ctx, tenant.tenantId);
    const firsts = await Promise.all(
      keys.map((key, i) => createWith(key, { type: 'token', data: `concurrent ${i}` })),
    );
    expect(firsts.map((res) => res.status)).toEqual(keys.map(() => 201));
    expect(await countTokens(ctx, tenant.tenantId)).toBe(before + keys.length);
    const agains = await Promise.all(
      keys.map((key, i) => createWith(key, { type: 'token', data: `concurrent ${i}` })),
    );
    agains.forEach((again, i) => expectSameAnswer(firsts[i], again));
    expect(await countTokens(ctx, tenant.tenantId)).toBe(before + keys.length);
  });

  it('refuses the same key for another body, path or method with a 422 naming the difference', async () => {
    const key = randomUUID();
    await createWith(key, { type: 'token', data: 'first' }).expect(201);
    const body = await createWith(key, { type: 'token', data: 'second' });
    expectProblem(body, 422);
    expect(body.body.detail).toMatch(/different body/);
    const path = await app.api.tokenize({ a: 'x' }).set(KEY_HEADER, key);
    expectProblem(path, 422);
    expect(path.body.detail).toMatch(/different path/);
    const created = (await app.api.create({ type: 'token', data: 'x' }).expect(201)).body.id as string;
    const method = await app.api.patch(created, { metadata: { a: '1' } }).set(KEY_HEADER, key);
    expectProblem(method, 422);
    expect(method.body.detail).toMatch(/different method \(POST\)/);
    expect(JSON.stringify([body.body, path.body, method.body])).not.toMatch(/first|second/);
  });

  it('keeps no failure: a request that failed runs again on retry', async () => {
    const id = randomUUID();
    const key = randomUUID();
    const patch = () => app.api.patch(id, { metadata: { step: 'two' } }).set(KEY_HEADER, key);
    await patch().expect(404);
    await app.api.create({ id, type: 'token', data: 'now it exists' }).expect(201);
    const retried = await patch().expect(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect((await patch()).headers['idempotent-replayed']).toBe('true');
  });

  it('scopes keys to the application: another application with the same key gets its own answer', async () => {
    const other = await tokenApp(ctx, tenant);
    const key = randomUUID();
    const body = { type: 'token', data: 'same key, two callers' };
    const mine = await createWith(key, body).expect(201);
    const theirs = await createWith(key, body, other.key).expect(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
  });

  it('forgets a key after 24 hours, and the purge deletes it', async () => {
    const key = randomUUID();
    const body = { type: 'token', data: 'a day' };
    const first = await createWith(key, body).expect(201);
    clock.advance(DAY_MS - 60_000);
    expect((await createWith(key, body)).headers['idempotent-replayed']).toBe('true');
    clock.advance(2 * 60_000);
    const later = await createWith(key, body).expect(201);
    expect(later.body.id).not.toBe(first.body.id);
    clock.advance(DAY_MS + 1000);
    await ctx.get(PurgeService).runIdempotencyKeys();
    const rows = await ctx.dataSource.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM idempotency_keys',
    );
    expect(rows[0].n).toBe(0);
  });

  it('stores answers sealed: no data, key or path in the table', async () => {
    const key = `canary-key-${randomUUID()}`;
    const data = cardData();
    await createWith(key, { type: 'card', data }).expect(201);
    const rows = await ctx.dataSource.query<Record<string, unknown>[]>('SELECT * FROM idempotency_keys');
    const dump = rows
      .map(({ response, ...row }) => JSON.stringify(row) + (response as Buffer | null)?.toString('latin1'))
      .join();
    expect(dump).not.toContain(key);
    expect(dump).not.toContain('/tokens');
    expect(dump).not.toContain(data.number.slice(-4) + '"');
    expect(dump).not.toContain('"data"');
  });

  it('lets a retry take over a claim left running (a /proxy or react whose process died) once the longest route time limit has passed', async () => {
    const store = ctx.get(IdempotencyStore);
    const request = {
      tenantId: tenant.tenantId,
      scope: randomUUID(),
      key: randomUUID(),
      method: 'POST',
      path: '/proxy',
      bodyHash: 'b'.repeat(64),
    };
    expect((await store.begin(request)).kind).toBe('run');
    // 30 s with the default PROXY_TIMEOUT_MS (25 s) and SANDBOX_TIMEOUT_MS (10 s): no longer two minutes.
    expect(store.staleAfterMs).toBeLessThanOrEqual(30_000);
    clock.advance(store.staleAfterMs - 1000);
    await expect(store.begin(request)).rejects.toMatchObject({ status: 409 });
    clock.advance(2000);
    expect((await store.begin(request)).kind).toBe('run');
  });

  it('refuses a malformed key with a 400 and ignores keys on GET and DELETE', async () => {
    const bad = await createWith('has space', { type: 'token', data: 'x' });
    expectProblem(bad, 400, ['BT-IDEMPOTENCY-KEY']);
    await app.api.list().set(KEY_HEADER, 'x').expect(200);
  });
});

describe('BT-IDEMPOTENCY-KEY on /proxy', () => {
  let fx: ProxyFixture;
  let tenant: TestTenant;
  let caller: Awaited<ReturnType<typeof tokenApp>>;
  let release: (() => void) | null = null;

  beforeAll(async () => {
    fx = await proxyFixture();
    tenant = await fx.ctx.newTenant();
    caller = await tokenApp(fx.ctx, tenant, [], ['token:create', 'token:read', 'token:use']);
  });
  afterAll(() => fx.close());

  it('sends once: a retry gets the destination’s first answer, another application does not', async () => {
    let calls = 0;
    const server = await fx.server((_req, res) => {
      calls++;
      res.setHeader('X-Call', String(calls));
      res.end(JSON.stringify({ call: calls }));
    });
    const { key } = await createProxy(fx.ctx, tenant, { destination_url: fx.url(server) });
    const idem = randomUUID();
    const send = (apiKey: string) =>
      fx.ctx.http
        .post('/proxy/charge')
        .set('BT-PROXY-KEY', key)
        .set('BT-API-KEY', apiKey)
        .set(KEY_HEADER, idem)
        .send({ amount: 1 });
    const first = await send(caller.key).expect(200);
    const again = await send(caller.key);
    expectSameAnswer(first, again);
    expect(again.headers['x-call']).toBe('1');
    expect(calls).toBe(1);

    const other = await tokenApp(fx.ctx, tenant, [], ['token:use']);
    const theirs = await send(other.key).expect(200);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(calls).toBe(2);
  });

  it('refuses a malformed key as a proxy_error, and answers too large to keep cannot be replayed', async () => {
    const big = Buffer.alloc(6 * 1024 * 1024, 'a');
    let calls = 0;
    const server = await fx.server((_req, res) => {
      calls++;
      res.end(big);
    });
    const { key } = await createProxy(fx.ctx, tenant, { destination_url: fx.url(server) });
    const send = (idem: string) =>
      fx.ctx.http
        .post('/proxy')
        .set('BT-PROXY-KEY', key)
        .set('BT-API-KEY', caller.key)
        .set(KEY_HEADER, idem)
        .send({ a: 1 });
    expectProxyError(await send('has space'), 400);
    expect(calls).toBe(0);
    const idem = randomUUID();
    const first = await send(idem).expect(200);
    expect(first.body.length ?? first.text.length).toBe(big.length);
    const again = await send(idem);
    const problem = expectProxyError(again, 409);
    expect(problem.detail).toMatch(/too large to keep/);
    expect(calls).toBe(1);
  });

  it('answers 409 while the first request is still running, then replays it', async () => {
    const server = await fx.server((_req, res) => {
      release = () => res.end('slow answer');
    });
    const { key } = await createProxy(fx.ctx, tenant, { destination_url: fx.url(server) });
    const idem = randomUUID();
    const send = () =>
      fx.ctx.http
        .post('/proxy')
        .set('BT-PROXY-KEY', key)
        .set('BT-API-KEY', caller.key)
        .set(KEY_HEADER, idem)
        .send({ a: 1 });
    const first = send().then((res) => res);
    while (release === null) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const during = await send();
    expectProxyError(during, 409);
    release();
    expect((await first).text).toBe('slow answer');
    const after = await send();
    expect(after.text).toBe('slow answer');
    expect(after.headers['idempotent-replayed']).toBe('true');
  });
});

const onPostgres = postgresUrl() === null ? describe.skip : describe;

onPostgres('BT-IDEMPOTENCY-KEY across two instances on one database', () => {
  let ctx: TestContext;
  let replica: VaultApp;

  beforeAll(async () => {
    ctx = await TestContext.create();
    replica = await ctx.secondInstance();
  });
  afterAll(async () => {
    await ctx.close();
  });

  it('holds a retry sent while the first request runs until that one commits, then replays it', async () => {
    const tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant);
    const before = await countTokens(ctx, tenant.tenantId);
    const key = randomUUID();
    // Token writes wait for this lock: the first request has claimed its key and is at its work.
    const locker = ctx.dataSource.createQueryRunner();
    await locker.startTransaction();
    await locker.query('LOCK TABLE tokens IN SHARE MODE');
    const send = () =>
      request(replica.app.getHttpServer())
        .post('/tokens')
        .set('BT-API-KEY', app.key)
        .set(KEY_HEADER, key)
        .send({ type: 'token', data: 'slow first attempt' });
    try {
      const first = send().then((res) => res);
      await new Promise((r) => setTimeout(r, 300));
      const retry = send().then((res) => res);
      await new Promise((r) => setTimeout(r, 300));
      await locker.rollbackTransaction();
      const [firstAnswer, retried] = await Promise.all([first, retry]);
      expect(firstAnswer.status).toBe(201);
      expectSameAnswer(firstAnswer, retried);
      expect(await countTokens(ctx, tenant.tenantId)).toBe(before + 1);
    } finally {
      await locker.release();
    }
  });

  it('creates exactly one token from concurrent retries spread over both instances', async () => {
    const tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant);
    const before = await countTokens(ctx, tenant.tenantId);
    const key = randomUUID();
    const servers = [ctx.vault.app.getHttpServer(), replica.app.getHttpServer()];
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        request(servers[i % 2])
          .post('/tokens')
          .set('BT-API-KEY', app.key)
          .set(KEY_HEADER, key)
          .send({ type: 'token', data: 'sent twelve times' }),
      ),
    );
    // A retry waits for the claim's transaction, then replays its answer: no 409 while it runs.
    expect(answers.map((res) => res.status)).toEqual(answers.map(() => 201));
    const created = answers;
    expect(new Set(created.map((res) => res.body.id as string)).size).toBe(1);
    expect(await countTokens(ctx, tenant.tenantId)).toBe(before + 1);
    // Once the first has finished, every retry on either instance gets its answer.
    for (const server of servers) {
      const again = await request(server)
        .post('/tokens')
        .set('BT-API-KEY', app.key)
        .set(KEY_HEADER, key)
        .send({ type: 'token', data: 'sent twelve times' })
        .expect(201);
      expect(again.body.id).toBe(created[0].body.id);
    }
  });
});
