import { ReactorRunsService } from '../../src/reactors/reactor-runs.service';
import { ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { reactorsApi } from '../support/reactor-factory';
import { TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

const SLOW_MS = 1000;
const FLOOD = 12;
const QUICK = 'module.exports = async () => ({ raw: 1 });';
const SLOW = 'module.exports = async (req) => { await fetch(req.configuration.url); return { raw: 2 }; };';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * One tenant queues many slow async runs (issue 37 item 5): another tenant's quick run is claimed before
 * the flood drains, not after it. Slow runs wait on a slow HTTPS receiver, so the flood costs no CPU.
 * Two workers: first come, first served would keep the quick run behind FLOOD * SLOW_MS / 2 = 6 s.
 */
describe('async runs shared fairly between tenants', () => {
  let fx: ProxyFixture;
  let flooder: TestTenant;
  let victim: TestTenant;
  let flooderKey: string;
  let victimKey: string;

  beforeAll(async () => {
    fx = await proxyFixture({ env: { SANDBOX_WORKERS: '2', SANDBOX_TIMEOUT_MS: '5000' } });
    flooder = await fx.ctx.newTenant('Flooder');
    victim = await fx.ctx.newTenant('Victim');
    flooderKey = (await tokenApp(fx.ctx, flooder, [], ['token:use'])).key;
    victimKey = (await tokenApp(fx.ctx, victim, [], ['token:use'])).key;
  });
  afterAll(() => fx.close());

  const reactor = async (tenant: TestTenant, code: string, configuration: Record<string, string> = {}) =>
    (await reactorsApi(fx.ctx, tenant).create({ name: 'Async', code, configuration })).body.id as string;
  async function submit(id: string, key: string): Promise<string> {
    const res = await fx.ctx.http.post(`/reactors/${id}/react-async`).set('BT-API-KEY', key).send({});
    expect(res.status).toBe(202);
    return res.body.id as string;
  }
  async function settled(id: string, runId: string, key: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 1200; i++) {
      const res = await fx.ctx.http.get(`/reactors/${id}/results/${runId}`).set('BT-API-KEY', key);
      if (res.body.status !== 'pending') {
        return res.body as Record<string, unknown>;
      }
      await sleep(50);
    }
    throw new Error('the run never finished');
  }
  async function runningOf(tenant: TestTenant): Promise<number> {
    const rows: { n: number }[] = await fx.ctx.dataSource.query(
      "SELECT count(*)::int AS n FROM reactor_runs WHERE tenant_id = $1 AND status = 'running'",
      [tenant.tenantId],
    );
    return rows[0].n;
  }

  it("runs another tenant's quick run while one tenant's slow runs wait, and keeps it a slot", async () => {
    const slowServer = await fx.server((_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      }, SLOW_MS);
    });
    const slowId = await reactor(flooder, SLOW, { url: fx.url(slowServer, '/slow') });
    const quickId = await reactor(victim, QUICK);
    // The victim used the async worker a moment ago (this also starts the sandbox's workers).
    expect(await settled(quickId, await submit(quickId, victimKey), victimKey)).toMatchObject({ raw: 1 });

    const flood: string[] = [];
    for (let i = 0; i < FLOOD; i++) {
      flood.push(await submit(slowId, flooderKey));
    }
    await sleep(300);
    // While the victim is active, the flooder holds one of the two slots at most (none between two runs).
    expect(await runningOf(flooder)).toBeLessThanOrEqual(1);

    const started = Date.now();
    const quick = await settled(quickId, await submit(quickId, victimKey), victimKey);
    const waited = Date.now() - started;
    expect(quick).toMatchObject({ status: 'completed', raw: 1 });
    // About its own time plus a poll; first come, first served: seconds behind the flood.
    expect(waited).toBeLessThan(3 * SLOW_MS);
    expect(await runningOf(flooder)).toBeLessThanOrEqual(1);

    // The flood still drains, every run of it.
    for (const runId of flood) {
      expect(await settled(slowId, runId, flooderKey)).toMatchObject({ status: 'completed', raw: 2 });
    }
    expect(slowServer.requests).toBe(FLOOD);
  });

  it('claims next the run of the tenant that holds the fewest, across replicas, before older runs', async () => {
    const runs = fx.ctx.get(ReactorRunsService);
    runs.onApplicationShutdown(); // this replica stops polling: the test claims by hand
    const busy = await fx.ctx.newTenant('Busy');
    const late = await fx.ctx.newTenant('Late');
    const busyKey = (await tokenApp(fx.ctx, busy, [], ['token:use'])).key;
    const lateKey = (await tokenApp(fx.ctx, late, [], ['token:use'])).key;
    const busyId = await reactor(busy, QUICK);
    for (let i = 0; i < 5; i++) {
      await submit(busyId, busyKey);
    }
    // Two of them run on another replica.
    await fx.ctx.dataSource.query(
      `UPDATE reactor_runs SET status = 'running', started_at = now()
       WHERE tenant_id = $1 AND id IN (SELECT id FROM reactor_runs WHERE tenant_id = $1 ORDER BY created_at LIMIT 2)`,
      [busy.tenantId],
    );
    const lateRun = await submit(await reactor(late, QUICK), lateKey);
    const claimed = await runs.claim(1);
    expect(claimed.map((c) => [c.tenant_id, c.id])).toEqual([[late.tenantId, lateRun]]);
  });
});
