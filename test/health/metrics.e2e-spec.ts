import { MetricsPort } from '../../src/health/metrics-port';
import { expectProblem } from '../support/problems';
import { freePort } from '../support/spawned-server';
import { TestContext, TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

describe('GET /metrics', () => {
  let ctx: TestContext;
  let tenant: TestTenant;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  it('reports requests by route template and status, process, pool and purge metrics, no ids or keys', async () => {
    const app = await tokenApp(ctx, tenant, [], ['token:create', 'token:read']);
    const id = 'customer-7f3a-visible-id';
    expect((await app.api.create({ id, type: 'token', data: 'secret value' })).status).toBe(201);
    await app.api.get(id).expect(200);
    await app.api.get('missing-token-id-xyz').expect(404);
    const res = await ctx.http.get('/metrics').set('BT-API-KEY', tenant.key);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.text;
    expect(text).toMatch(
      /token_vault_http_request_duration_seconds_count\{method="POST",route="\/tokens",status="201"\} 1/,
    );
    expect(text).toMatch(
      /token_vault_http_request_duration_seconds_count\{method="GET",route="\/tokens\/:id",status="200"\} 1/,
    );
    expect(text).toMatch(/route="\/tokens\/:id",status="404"/);
    for (const series of [
      'token_vault_process_cpu_seconds_total',
      'token_vault_nodejs_eventloop_lag_seconds',
      'token_vault_db_pool_connections',
      'token_vault_purged_tokens_total',
      'token_vault_sandbox_runs_total',
    ]) {
      expect(text).toContain(series);
    }
    for (const secret of [id, 'missing-token-id-xyz', tenant.key, app.key, tenant.tenantId, 'secret value']) {
      expect(text).not.toContain(secret);
    }
  });

  it('needs a management key unless METRICS_PUBLIC=true', async () => {
    expectProblem(await ctx.http.get('/metrics'), 401);
    const app = await tokenApp(ctx, tenant, [], ['token:read']);
    expectProblem(await ctx.http.get('/metrics').set('BT-API-KEY', app.key), 403);
    const open = await TestContext.create({ env: { METRICS_PUBLIC: 'true' } });
    try {
      expect((await open.http.get('/metrics')).status).toBe(200);
    } finally {
      await open.close();
    }
  });

  it('is served only on METRICS_PORT when that is set', async () => {
    const port = await freePort();
    const separate = await TestContext.create({ env: { METRICS_PORT: String(port), HOST: '127.0.0.1' } });
    try {
      expectProblem(await separate.http.get('/metrics').set('BT-API-KEY', tenant.key), 404);
      expect(separate.get(MetricsPort).address()).toBe(port);
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('token_vault_http_request_duration_seconds');
      expect((await fetch(`http://127.0.0.1:${port}/tokens`)).status).toBe(404);
    } finally {
      await separate.close();
    }
  });
});
