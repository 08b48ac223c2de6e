import request from 'supertest';
import { PurgeService } from '../../src/jobs/purge.service';
import { ReactService } from '../../src/reactors/react.service';
import { ReactorRunsService } from '../../src/reactors/reactor-runs.service';
import { SandboxRefused } from '../../src/sandbox/sandbox.provider';
import { expectProblem } from '../support/problems';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, countTokens, tokenApp } from '../support/token-factory';

const SDK = "require('@basis-theory/basis-theory-reactor-formulas-sdk-js')";
// Two instances share one database only on PostgreSQL (the embedded database belongs to one process).
const onPostgres = process.env.DATABASE_URL ? it : it.skip;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('POST /reactors/:id/react-async and GET /reactors/:id/results/:requestId', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let caller: Awaited<ReturnType<typeof tokenApp>>;

  beforeAll(async () => {
    ctx = await TestContext.create({ env: { SANDBOX_WORKERS: '2', SANDBOX_TIMEOUT_MS: '3000' } });
    tenant = await ctx.newTenant('Acme');
    caller = await tokenApp(ctx, tenant, [], ['token:create', 'token:use']);
  });
  afterAll(() => ctx.close());

  const codeReactor = async (code: string, extra: Record<string, unknown> = {}, on = tenant) =>
    (await reactorsApi(ctx, on).create({ name: 'Async', code, ...extra })).body.id as string;
  const submit = (id: string, body: unknown, key = caller.key, http = ctx.http) =>
    http
      .post(`/reactors/${id}/react-async`)
      .set('BT-API-KEY', key)
      .send(body as object);
  const resultOf = (id: string, runId: string, key = caller.key) =>
    ctx.http.get(`/reactors/${id}/results/${runId}`).set('BT-API-KEY', key);
  /** Polls until the run is no longer pending (or gives up after about a minute). */
  async function settled(id: string, runId: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 600; i++) {
      const res = await resultOf(id, runId);
      expect(res.status).toBe(200);
      if (res.body.status !== 'pending') {
        return res.body as Record<string, unknown>;
      }
      await sleep(100);
    }
    throw new Error('the run never finished');
  }

  it('with BT-IDEMPOTENCY-KEY: queues one run, which completes, and a retry gets the same id', async () => {
    const id = await codeReactor('module.exports = async () => ({ raw: { ok: true } });');
    const keyed = () => submit(id, { args: {} }).set('BT-IDEMPOTENCY-KEY', `async-${id}`);
    const accepted = await keyed();
    expect(accepted.status).toBe(202);
    const again = await keyed();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(accepted.body.id);
    // Queued in the request's transaction, run once it committed (not inside it).
    expect(await settled(id, accepted.body.id as string)).toMatchObject({
      status: 'completed',
      raw: { ok: true },
    });
  });

  it('answers 202 with an id at once, then the result in the body shape of a synchronous react', async () => {
    const app = await ctx.newApplication(tenant, 'private', ['token:create']);
    const data = cardData();
    const card = await caller.api.create({ type: 'card', data });
    const id = await codeReactor(
      'module.exports = async (req) => ({ raw: { last4: req.args.card.number.slice(-4) }, tokenize: { kept: req.args.card.number } });',
      { application: { id: app.id } },
    );
    const args = { args: { card: `{{ ${card.body.id as string} }}` } };
    const accepted = await submit(id, args);
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({
      id: expect.any(String),
      asyncReactorRequestId: accepted.body.id,
      status: 'pending',
    });
    const done = await settled(id, accepted.body.id as string);
    const sync = await reactorsApi(ctx, tenant).react(id, args, caller.key);
    expect(done).toEqual({
      id: accepted.body.id,
      reactor_id: id,
      status: 'completed',
      tokens: { kept: expect.any(String) },
      raw: sync.body.raw,
      error: null,
      created_at: expect.any(String),
      completed_at: expect.any(String),
      expires_at: expect.any(String),
    });
    expect(Object.keys(sync.body).sort()).toEqual(['raw', 'tokens']);
    expect(done.raw).toEqual({ last4: data.number.slice(-4) });
    expect(Date.parse(done.expires_at as string) - Date.parse(done.created_at as string)).toBe(
      24 * 3600 * 1000,
    );
    // Stored sealed: neither the detokenized argument nor the result is readable in the row.
    const rows: { request: Buffer | null; result: Buffer }[] = await ctx.dataSource.query(
      'SELECT request, result FROM reactor_runs WHERE tenant_id = $1 AND id = $2',
      [tenant.tenantId, accepted.body.id],
    );
    expect(rows[0].request).toBeNull();
    expect(Buffer.from(rows[0].result).toString('latin1')).not.toContain(data.number.slice(-4));
  });

  it('reports a failed run with the error a synchronous react answers', async () => {
    const id = await codeReactor(
      `const { BadRequestError } = ${SDK}; module.exports = async () => { throw new BadRequestError('no amount'); };`,
    );
    const accepted = await submit(id, {});
    const done = await settled(id, accepted.body.id as string);
    const sync = await reactorsApi(ctx, tenant).react(id, {}, caller.key);
    expect(done).toMatchObject({ status: 'failed', tokens: null, raw: null, error: sync.body });
    expect(sync.status).toBe(400);
  });

  it('refuses bad arguments, unknown reactors and missing permissions at once', async () => {
    const { reactorId } = await newReactor(ctx, tenant, {
      request_parameters: [{ name: 'amount', type: 'number', optional: false }],
    });
    expectProblem(await submit(reactorId, { args: {} }), 400, ['args.amount']);
    expectProblem(
      await submit(reactorId, { args: { amount: '{{ 00000000-0000-4000-8000-000000000000 }}' } }),
      400,
    );
    expectProblem(await submit('00000000-0000-4000-8000-000000000000', {}), 404);
    const noUse = await ctx.newApplication(tenant, 'private', ['token:create']);
    expectProblem(await submit(reactorId, { args: { amount: 1 } }, noUse.key), 403);
    expectProblem(await submit(reactorId, { args: 'x' }), 400, ['args']);
  });

  it('answers 404 for an unknown run, another reactor’s, another tenant’s and one past its 24 hours', async () => {
    const id = await codeReactor('module.exports = async () => ({ raw: 1 });');
    const runId = (await submit(id, {})).body.id as string;
    await settled(id, runId);
    const otherReactor = await codeReactor('module.exports = async () => ({ raw: 2 });');
    expectProblem(await resultOf(otherReactor, runId), 404);
    expectProblem(await resultOf(id, '00000000-0000-4000-8000-000000000000'), 404);
    expectProblem(await resultOf(id, 'nope'), 400);
    const other = await ctx.newTenant('Other');
    const theirs = await tokenApp(ctx, other, [], ['token:use']);
    expectProblem(await resultOf(id, runId, theirs.key), 404);
    // Past its 24 hours: gone from the API at once, deleted by the scheduled purge.
    await ctx.dataSource.query(
      "UPDATE reactor_runs SET expires_at = now() - interval '1 second' WHERE tenant_id = $1 AND id = $2",
      [tenant.tenantId, runId],
    );
    expectProblem(await resultOf(id, runId), 404);
    await ctx.get(PurgeService).runReactorResults();
    const left: unknown[] = await ctx.dataSource.query('SELECT id FROM reactor_runs WHERE id = $1', [runId]);
    expect(left).toEqual([]);
  });

  it('shows a result only to the application that started the run, 404 to another', async () => {
    const data = cardData();
    const card = await caller.api.create({ type: 'card', data });
    const id = await codeReactor(
      'module.exports = async (req) => ({ raw: { number: req.args.card.number } });',
    );
    const runId = (await submit(id, { args: { card: `{{ ${card.body.id as string} }}` } })).body.id as string;
    expect(await settled(id, runId)).toMatchObject({ status: 'completed', raw: { number: data.number } });
    // Another application of the same tenant with token:use, but only on a container the card is not in.
    const narrow = await tokenApp(
      ctx,
      tenant,
      [
        {
          description: null,
          priority: 1,
          container: '/other/',
          transform: 'reveal',
          permissions: ['token:use'],
        },
      ],
      ['token:use'],
    );
    const refused = await ctx.http
      .post('/detokenize')
      .set('BT-API-KEY', narrow.key)
      .send({ n: `{{ ${card.body.id as string} }}` });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(refused.body)).not.toContain(data.number);
    const res = await resultOf(id, runId, narrow.key);
    expectProblem(res, 404);
    expect(JSON.stringify(res.body)).not.toContain(data.number);
    // Only private applications hold token:use: a management key is refused whichever run it names.
    const unknown = '00000000-0000-4000-8000-000000000000';
    expectProblem(await resultOf(id, runId, tenant.key), 403);
    expectProblem(await resultOf(id, unknown, tenant.key), 403);
    // The application that started it still reads it.
    expect((await resultOf(id, runId)).body).toMatchObject({
      status: 'completed',
      raw: { number: data.number },
    });
  });

  it('puts a run the sandbox turned away back in the queue and looks again later, not at once', async () => {
    const id = await codeReactor('module.exports = async () => ({ raw: 7 });');
    const refused = jest
      .spyOn(ctx.get(ReactService), 'run')
      .mockRejectedValue(new SandboxRefused(503, 'The sandbox is busy.'));
    let runId: string;
    try {
      const accepted = await submit(id, {});
      expect(accepted.status).toBe(202);
      runId = accepted.body.id as string;
      for (let i = 0; i < 100 && refused.mock.calls.length === 0; i++) {
        await sleep(20);
      }
      await sleep(300);
      // Claiming it again at once would meet the same refusal, over and over: the next look waits 500 ms.
      expect(refused.mock.calls.length).toBeGreaterThanOrEqual(1);
      expect(refused.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      refused.mockRestore();
    }
    // This replica runs no scheduled jobs: its own later look still takes the run up.
    expect(await settled(id, runId)).toMatchObject({ status: 'completed', raw: 7 });
  });

  it('takes the oldest run of each tenant in turn', async () => {
    const runs = ctx.get(ReactorRunsService);
    runs.onApplicationShutdown(); // this replica stops polling: the test claims by hand
    const other = await ctx.newTenant('Second');
    const theirCaller = await tokenApp(ctx, other, [], ['token:use']);
    const mine = await codeReactor('module.exports = async () => ({ raw: 1 });');
    const theirs = await codeReactor('module.exports = async () => ({ raw: 1 });', {}, other);
    for (let i = 0; i < 4; i++) {
      expect((await submit(mine, {})).status).toBe(202);
    }
    expect((await submit(theirs, {}, theirCaller.key)).status).toBe(202);
    const claimed = await runs.claim(2);
    expect(claimed.map((c) => c.tenant_id).sort()).toEqual([tenant.tenantId, other.tenantId].sort());
    // Survives a restart: the runs still waiting are taken up by the new process (the two claimed ones
    // count as running when it stopped: they end as failed later rather than run twice).
    const waiting: { id: string; reactor_id: string }[] = await ctx.dataSource.query(
      "SELECT id, reactor_id FROM reactor_runs WHERE status = 'pending' AND tenant_id = $1",
      [tenant.tenantId],
    );
    // The new process runs the scheduled jobs, so it looks for waiting runs at once and then every 500 ms.
    await ctx.restart({ SANDBOX_WORKERS: '2', SANDBOX_TIMEOUT_MS: '3000', JOBS_ENABLED: 'true' });
    expect(waiting).toHaveLength(3);
    for (const run of waiting) {
      expect(await settled(run.reactor_id, run.id)).toMatchObject({ status: 'completed', raw: 1 });
    }
    // The run the old process had claimed: once well past the time limit, failed, never run again.
    const interrupted = claimed.find((c) => c.tenant_id === tenant.tenantId);
    expect(interrupted).toBeDefined();
    await ctx.dataSource.query(
      "UPDATE reactor_runs SET started_at = now() - interval '1 hour' WHERE tenant_id = $1 AND id = $2",
      [tenant.tenantId, interrupted?.id],
    );
    ctx.get(ReactorRunsService).kick();
    expect(await settled(mine, interrupted?.id as string)).toMatchObject({
      status: 'failed',
      raw: null,
      error: { status: 500, detail: expect.stringContaining('interrupted') },
    });
  });

  onPostgres('runs each request once across two replicas', async () => {
    const replica = await ctx.secondInstance();
    const replicaHttp = request(replica.app.getHttpServer());
    const app = await ctx.newApplication(tenant, 'private', ['token:create']);
    const id = await codeReactor(
      "module.exports = async (req) => { await req.bt.tokens.create({ type: 'token', data: 'run ' + req.args.n }); return { raw: req.args.n }; };",
      { application: { id: app.id } },
    );
    const before = await countTokens(ctx, tenant.tenantId);
    const ids: string[] = [];
    for (let n = 0; n < 12; n++) {
      const res = await submit(id, { args: { n } }, caller.key, n % 2 === 0 ? ctx.http : replicaHttp);
      expect(res.status).toBe(202);
      ids.push(res.body.id as string);
    }
    for (const [n, runId] of ids.entries()) {
      expect(await settled(id, runId)).toMatchObject({ status: 'completed', raw: n });
    }
    expect(await countTokens(ctx, tenant.tenantId)).toBe(before + 12);
  });
});
