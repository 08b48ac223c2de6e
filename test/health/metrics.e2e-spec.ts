import { ConfigError, loadConfig } from '../../src/config/app-config';
import { MetricsPort } from '../../src/metrics/metrics-port';
import { expectProblem } from '../support/problems';
import { freePort } from '../support/spawned-server';
import { TestContext, TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

/** The operator's scrape token in these tests (METRICS_TOKEN needs 32 characters or more). */
const TOKEN = 'operator-metrics-token-0123456789abcdef';
const bearer = (token: string): string => `Bearer ${token}`;

describe('GET /metrics', () => {
  let ctx: TestContext;
  let tenant: TestTenant;

  beforeAll(async () => {
    ctx = await TestContext.create({ env: { METRICS_TOKEN: TOKEN } });
    tenant = await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  it('reports requests by route template and status, process, pool and purge metrics, no ids or keys', async () => {
    const app = await tokenApp(ctx, tenant, [], ['token:create', 'token:read']);
    const id = 'customer-7f3a-visible-id';
    expect((await app.api.create({ id, type: 'token', data: 'secret value' })).status).toBe(201);
    await app.api.get(id).expect(200);
    await app.api.get('missing-token-id-xyz').expect(404);
    const res = await ctx.http.get('/metrics').set('Authorization', bearer(TOKEN));
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

  it("never answers to a tenant's key: the 404 of a path that does not exist", async () => {
    const missing = await ctx.http.get('/no-such-path');
    const other = await ctx.newTenant('Other');
    const app = await tokenApp(ctx, tenant, [], ['token:read']);
    const attempts = [
      ctx.http.get('/metrics').set('BT-API-KEY', tenant.key),
      ctx.http.get('/metrics').set('BT-API-KEY', other.key),
      ctx.http.get('/metrics').set('BT-API-KEY', app.key),
      ctx.http.get('/metrics').set('Authorization', bearer(tenant.key)),
      ctx.http.get('/metrics').set('Authorization', bearer(TOKEN.slice(0, -1))),
      ctx.http.get('/metrics').set('Authorization', `Basic ${TOKEN}`),
      ctx.http.get('/metrics').set('Authorization', bearer(`${TOKEN}x`)),
      ctx.http.get('/metrics'),
    ];
    for (const res of await Promise.all(attempts)) {
      expectProblem(res, 404);
      expect(res.body).toEqual(missing.body);
      expect(res.text).not.toContain('token_vault_');
    }
  });

  it('answers every other method the same 404 while hidden, and 405 only to the token holder (issue 37)', async () => {
    for (const method of ['post', 'put', 'patch', 'delete', 'options'] as const) {
      const missing = await ctx.http[method]('/no-such-path');
      for (const res of [
        await ctx.http[method]('/metrics'),
        await ctx.http[method]('/metrics').set('BT-API-KEY', tenant.key).send({}),
      ]) {
        expectProblem(res, 404);
        expect(res.body).toEqual(missing.body);
        expect(res.headers.allow).toBeUndefined();
      }
      const operator = await ctx.http[method]('/metrics').set('Authorization', bearer(TOKEN));
      expectProblem(operator, 405);
      expect(operator.headers.allow).toBe('GET, HEAD');
    }
    expect((await ctx.http.head('/metrics')).status).toBe(404);
    expect((await ctx.http.head('/metrics').set('Authorization', bearer(TOKEN))).status).toBe(200);
  });

  it('without METRICS_TOKEN or METRICS_PORT is served to nobody (a management key included)', async () => {
    const closed = await TestContext.create();
    try {
      const owner = await closed.newTenant();
      expectProblem(await closed.http.get('/metrics').set('BT-API-KEY', owner.key), 404);
      expectProblem(await closed.http.get('/metrics').set('Authorization', bearer(TOKEN)), 404);
    } finally {
      await closed.close();
    }
  });

  it('is not in the OpenAPI document', async () => {
    const doc = (await ctx.http.get('/docs-json')).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).not.toContain('/metrics');
  });

  it('is served only on METRICS_PORT when that is set, on loopback unless METRICS_HOST says otherwise', async () => {
    const port = await freePort();
    const separate = await TestContext.create({ env: { METRICS_PORT: String(port), HOST: '0.0.0.0' } });
    try {
      expect(separate.config.metricsHost).toBe('127.0.0.1');
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

  it('on METRICS_PORT with METRICS_TOKEN, needs the token there too (and 404 on the main port)', async () => {
    const port = await freePort();
    const both = await TestContext.create({ env: { METRICS_PORT: String(port), METRICS_TOKEN: TOKEN } });
    try {
      const url = `http://127.0.0.1:${port}/metrics`;
      expect((await fetch(url)).status).toBe(401);
      expect((await fetch(url, { headers: { 'BT-API-KEY': tenant.key } })).status).toBe(401);
      expect((await fetch(url, { headers: { Authorization: bearer(TOKEN) } })).status).toBe(200);
      expectProblem(await both.http.get('/metrics').set('Authorization', bearer(TOKEN)), 404);
    } finally {
      await both.close();
    }
  });

  it('refuses METRICS_PUBLIC=true and a short METRICS_TOKEN at boot', () => {
    expect(() => loadConfig({ METRICS_PUBLIC: 'true' })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_PUBLIC: 'false' })).not.toThrow();
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/at least 32/);
  });
});
