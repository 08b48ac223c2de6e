import { ApiError } from '../../src/common/api-error';
import type { RejectReason, WorkerPool } from '../../src/sandbox/worker-pool';
import type { HostHandler, SandboxOutcome } from '../../src/sandbox/sandbox.provider';
import { testPool } from './sandbox-harness';

const LOOP = 'module.exports = async () => { for (;;) {} };';
const QUICK = 'module.exports = async () => ({ raw: 1 });';
/** Calls the host once, so a test can count whether the run happened. */
const COUNTED =
  "module.exports = async (req) => { await req.bt.tokens.create({ type: 'token', data: 1 }); };";

function run(
  pool: WorkerPool,
  tenant: string,
  code: string,
  handlers: Record<string, HostHandler> = {},
  signal?: AbortSignal,
): Promise<SandboxOutcome> {
  const input = JSON.stringify({
    req: { args: {}, configuration: {} },
    bt: Object.keys(handlers).length > 0,
  });
  return pool.run({ tenant, code, input, handlers, signal });
}

async function refusal(work: Promise<unknown>): Promise<{ status: number; retry?: string }> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return { status: (err as ApiError).status, retry: (err as ApiError).headers?.['Retry-After'] };
}

/** The pool's queue rules with real worker processes and isolates (issue 19 item 3). */
describe('sandbox queueing across tenants', () => {
  let pool: WorkerPool;
  let rejected: RejectReason[];

  async function start(options: Parameters<typeof testPool>[0]): Promise<void> {
    rejected = [];
    pool = testPool({ timeoutMs: 800, onRejected: (reason) => rejected.push(reason), ...options });
    expect(await run(pool, 'warm-up', QUICK)).toEqual({ ok: true, value: { raw: 1 } });
  }
  afterEach(() => pool.close());

  it("runs another tenant's run before the flooding tenant's backlog", async () => {
    await start({ workers: 2, tenantMaxRunning: 1 });
    const order: string[] = [];
    const flood = [1, 2, 3, 4, 5].map((n) =>
      run(pool, 'hostile', LOOP).then(() => order.push(`hostile${n}`)),
    );
    const { queued, running } = pool.stats();
    expect(queued + running).toBe(5);
    const victim = run(pool, 'victim', QUICK).then((outcome) => {
      order.push('victim');
      return outcome;
    });
    expect(await victim).toEqual({ ok: true, value: { raw: 1 } });
    await Promise.all(flood);
    // Served by the first worker to free up: after the two runs holding workers, before the three waiting.
    expect(order.indexOf('victim')).toBeLessThanOrEqual(2);
  });

  it('keeps a flooding tenant to its share while another tenant uses the sandbox, leaving a worker free', async () => {
    // start() warmed up as tenant `warm-up`: another tenant used the sandbox just now.
    await start({ workers: 2, tenantMaxRunning: 1 });
    const flood = [1, 2, 3].map(() => run(pool, 'hostile', LOOP));
    expect(pool.stats()).toEqual({ queued: 2, running: 1 });
    let hostileDone = 0;
    flood.forEach((p) => void p.then(() => hostileDone++));
    expect(await run(pool, 'victim', QUICK)).toEqual({ ok: true, value: { raw: 1 } });
    // The victim did not wait for a hostile run to end: a worker was kept free.
    expect(hostileDone).toBe(0);
    await Promise.all(flood);
  });

  it('lets a tenant alone use every worker', async () => {
    pool = testPool({ workers: 2, tenantMaxRunning: 1, timeoutMs: 5000 });
    expect(await run(pool, 'solo', QUICK)).toEqual({ ok: true, value: { raw: 1 } });
    const runs = [run(pool, 'solo', LOOP), run(pool, 'solo', LOOP)];
    // The second worker may still be starting; once it is up, it takes the second run.
    for (let waited = 0; pool.stats().running < 2 && waited < 4500; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(pool.stats()).toEqual({ queued: 0, running: 2 });
    await Promise.all(runs);
  });

  it('refuses past the per-tenant queue cap with 429 and past the global cap with 503, with Retry-After', async () => {
    await start({ workers: 1, tenantMaxQueue: 2, maxQueue: 3 });
    const held = [run(pool, 'a', LOOP), run(pool, 'a', QUICK), run(pool, 'a', QUICK)];
    expect(await refusal(run(pool, 'a', QUICK))).toEqual({ status: 429, retry: '1' });
    const b = run(pool, 'b', QUICK);
    expect(await refusal(run(pool, 'c', QUICK))).toEqual({ status: 503, retry: '1' });
    expect(rejected).toEqual(['tenant_queue_full', 'queue_full']);
    await Promise.all([...held, b]);
  });

  it('drops a waiting run whose client went away: it never runs', async () => {
    await start({ workers: 1 });
    let calls = 0;
    const counted = {
      'bt.tokens.create': () => {
        calls++;
        return Promise.resolve({ id: 't' });
      },
    };
    const loop = run(pool, 'a', LOOP);
    const client = new AbortController();
    const waiting = run(pool, 'a', COUNTED, counted, client.signal);
    expect(pool.stats().queued).toBe(1);
    client.abort();
    expect(await refusal(waiting)).toEqual({ status: 503, retry: undefined });
    expect(pool.stats().queued).toBe(0);
    expect(rejected).toEqual(['cancelled']);
    await loop;
    // A run whose client had gone before it was submitted is refused at once as well.
    expect((await refusal(run(pool, 'a', COUNTED, counted, client.signal))).status).toBe(503);
    expect(await run(pool, 'a', COUNTED, counted)).toEqual({ ok: true, value: null });
    expect(calls).toBe(1);
  });
});
