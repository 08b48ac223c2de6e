import { execFileSync } from 'node:child_process';
import type { Response } from 'supertest';
import { MetricsService } from '../../src/metrics/metrics.service';
import { TestHttpsServer } from '../support/https-test-server';
import { expectProblem } from '../support/problems';
import { createProxy, expectProxyError, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { ECHO_CODE, newReactor, reactorsApi } from '../support/reactor-factory';
import { TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

const TIMEOUT_MS = 8000;
/** Killing a worker must answer its run long before the time limit would have. */
const ANSWER_WITHIN_MS = 3000;
/** Busy for 6 s: still running when the test kills its worker, yet inside the time limit. */
const BUSY = 'const end = Date.now() + 6000; while (Date.now() < end) {}';

/** The sandbox worker processes of this test process (children running the worker script). */
function workerPids(): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes('sandbox-worker'))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/**
 * Issue 24 item 6: a worker killed from outside (the OOM killer, an operator) in the middle of a run. The
 * run it held gets a clear 5xx at once, not a hang until the deadline; runs waiting behind it go to a fresh
 * worker and succeed.
 */
describe('a sandbox worker killed in the middle of a run', () => {
  let fx: ProxyFixture;
  let echo: TestHttpsServer;
  let tenant: TestTenant;
  let caller: Awaited<ReturnType<typeof tokenApp>>;

  beforeAll(async () => {
    fx = await proxyFixture({
      env: { SANDBOX_WORKERS: '1', SANDBOX_TIMEOUT_MS: String(TIMEOUT_MS), SANDBOX_TENANT_RUNNING: '1' },
    });
    echo = await fx.server();
    tenant = await fx.ctx.newTenant();
    caller = await tokenApp(fx.ctx, tenant, [], ['token:use']);
  });
  afterAll(() => fx.close());

  /** Waits until the sandbox holds one run and has `queued` waiting (the metrics gauge). */
  async function untilLoad(queued: number): Promise<void> {
    const metrics = fx.ctx.get(MetricsService);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const text = await metrics.text();
      if (
        text.includes('token_vault_sandbox_jobs{state="running"} 1') &&
        text.includes(`token_vault_sandbox_jobs{state="queued"} ${queued}`)
      ) {
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(`the sandbox never held 1 run with ${queued} waiting`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Kills the one worker with SIGKILL; answers when, and its pid. */
  function killWorker(): { at: number; pid: number } {
    const pids = workerPids();
    expect(pids).toHaveLength(1);
    process.kill(pids[0], 'SIGKILL');
    return { at: Date.now(), pid: pids[0] };
  }

  const timed = (request: PromiseLike<Response>): Promise<{ res: Response; at: number }> =>
    Promise.resolve(request).then((res) => ({ res, at: Date.now() }));

  it('answers the reaction it ran with a 500 problem at once; queued reactions run on a fresh worker', async () => {
    const api = reactorsApi(fx.ctx, tenant);
    const busy = await newReactor(fx.ctx, tenant, {
      code: `module.exports = async function (req) { ${BUSY} return { raw: 'finished' }; };`,
      request_parameters: [],
    });
    const echoReactor = await newReactor(fx.ctx, tenant, { code: ECHO_CODE });
    // Warm: the worker is up before the run that gets killed.
    expect((await api.react(echoReactor.reactorId, { args: { amount: 0 } }, caller.key)).status).toBe(200);

    const started = Date.now();
    const inFlight = timed(api.react(busy.reactorId, { args: {} }, caller.key));
    await untilLoad(0);
    const queued = [1, 2].map((amount) =>
      timed(api.react(echoReactor.reactorId, { args: { amount } }, caller.key)),
    );
    await untilLoad(2);
    const killed = killWorker();

    const { res, at } = await inFlight;
    expectProblem(res, 500);
    expect(res.body.detail).toBe('The sandbox stopped while running the code.');
    expect(at - killed.at).toBeLessThan(ANSWER_WITHIN_MS);
    expect(at - started).toBeLessThan(TIMEOUT_MS);
    const answers = await Promise.all(queued);
    expect(answers.map(({ res: r }) => [r.status, r.body.raw])).toEqual([
      [200, { amount: 1 }],
      [200, { amount: 2 }],
    ]);
    const fresh = workerPids();
    expect(fresh).toHaveLength(1);
    expect(fresh[0]).not.toBe(killed.pid);
  });

  it('answers a proxy request transform it ran with a 500 proxy_error; the next proxy call is served', async () => {
    const slow = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(echo),
      request_transform: { code: `module.exports = async function (req) { ${BUSY} return req.args; };` },
    });
    const fast = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(echo),
      request_transform: {
        code: "module.exports = async function (req) { return { body: { ...req.args.body, via: 'transform' }, headers: req.args.headers }; };",
      },
    });
    const call = (key: string, body: object) =>
      fx.ctx.http.post('/proxy').set('BT-API-KEY', caller.key).set('BT-PROXY-KEY', key).send(body);
    const before = echo.requests;

    const inFlight = timed(call(slow.key, { n: 1 }));
    await untilLoad(0);
    const next = timed(call(fast.key, { n: 2 }));
    await untilLoad(1);
    const killed = killWorker();

    const { res, at } = await inFlight;
    expect(expectProxyError(res, 500).detail).toBe('The sandbox stopped while running the code.');
    expect(at - killed.at).toBeLessThan(ANSWER_WITHIN_MS);
    const served = (await next).res;
    expect([served.status, served.body]).toEqual([200, { n: 2, via: 'transform' }]);
    // The killed transform's request never reached the destination.
    expect(echo.requests).toBe(before + 1);
  });
});
