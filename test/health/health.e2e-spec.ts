import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageVersion } from '../../src/config/build-info';
import { HealthService } from '../../src/health/health.service';
import { SandboxProvider } from '../../src/sandbox/sandbox.provider';
import { expectProblem } from '../support/problems';
import { TestContext } from '../support/test-app';

const METRICS_TOKEN = 'operator-metrics-token-0123456789abcdef';

describe('health and front door', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({ env: { METRICS_TOKEN } });
  });
  afterAll(() => ctx.close());

  it('answers liveness and readiness without a key', async () => {
    await ctx.http.get('/health').expect(200, { status: 'ok', version: packageVersion() });
    await ctx.http.get('/health/live').expect(200, { status: 'ok' });
    await ctx.http.get('/health/ready').expect(200, {
      status: 'ok',
      checks: {
        database: 'ok',
        migrations: 'ok',
        setup: 'ok',
        keys: 'ok',
        sandbox: 'ok',
        notifications: 'ok',
      },
    });
  });

  it('names the failing part on readiness, and only readiness fails', async () => {
    const sandbox = ctx.get(SandboxProvider);
    const down = jest.spyOn(sandbox, 'isUp').mockReturnValue(false);
    try {
      const res = await ctx.http.get('/health/ready');
      expectProblem(res, 503, ['sandbox']);
      expect(res.body.detail).toBe('Not ready: sandbox.');
      expect(Object.keys(res.body.errors)).toEqual(['sandbox']);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      await ctx.http.get('/health/live').expect(200);
      await ctx.http.get('/health').expect(200, { status: 'ok', version: packageVersion() });
    } finally {
      down.mockRestore();
    }
    await ctx.http.get('/health/ready').expect(200);
  });

  it('reports the database as reachable on /metrics, with no reconnects yet', async () => {
    const text = (await ctx.http.get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200))
      .text;
    expect(text).toMatch(/^token_vault_db_reachable 1$/m);
    expect(text).toMatch(/^token_vault_db_reconnects_total 0$/m);
    expect(text).toMatch(/^token_vault_change_notifications_trusted 1$/m);
    expect(text).toMatch(/^token_vault_sealed 0$/m);
  });

  it('says which build runs: token_vault_build_info and the version on /health', async () => {
    const version = (
      JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { version: string }
    ).version;
    expect((await ctx.http.get('/health').expect(200)).body).toEqual({ status: 'ok', version });
    const text = (await ctx.http.get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200))
      .text;
    expect(text).toContain(
      `token_vault_build_info{version="${version}",commit="",node="${process.version}"} 1`,
    );
    const built = await TestContext.create({ env: { METRICS_TOKEN, VAULT_BUILD_COMMIT: '4469156abc' } });
    try {
      const scraped = await built.http
        .get('/metrics')
        .set('Authorization', `Bearer ${METRICS_TOKEN}`)
        .expect(200);
      expect(scraped.text).toContain(
        `token_vault_build_info{version="${version}",commit="4469156abc",node="${process.version}"} 1`,
      );
    } finally {
      await built.close();
    }
  });

  it('serves the OpenAPI document', async () => {
    const res = await ctx.http.get('/docs-json').expect(200);
    expect(res.body.paths['/applications']).toBeDefined();
    expect(res.body.paths['/health/live'].get.security).toBeUndefined();
    expect(res.body.paths['/health/ready'].get.security).toBeUndefined();
  });

  it('tells an authenticated caller who it is', async () => {
    const tenant = await ctx.newTenant();
    const res = await ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key).expect(200);
    expect(res.body).toMatchObject({ tenant_id: tenant.tenantId, type: 'management' });
    expect(res.body.key).toBeUndefined();
  });

  it('answers 503 on liveness and readiness once shutdown begins; /health keeps its answer', async () => {
    ctx.get(HealthService).shuttingDown();
    expectProblem(await ctx.http.get('/health/live'), 503);
    expectProblem(await ctx.http.get('/health/ready'), 503);
    await ctx.http.get('/health').expect(200, { status: 'ok', version: packageVersion() });
  });
});

describe('readiness with a migration not applied', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('answers 503 naming migrations until it is applied', async () => {
    // TypeORM answers a DELETE ... RETURNING with [rows, affected].
    const [[row]] = await ctx.dataSource.query<[{ id: number; timestamp: string; name: string }[], number]>(
      'DELETE FROM migrations WHERE id = (SELECT max(id) FROM migrations) RETURNING id, timestamp, name',
    );
    const res = await ctx.http.get('/health/ready');
    expectProblem(res, 503, ['migrations']);
    expect(res.body.errors).toEqual({ migrations: ['1 pending (npm run migration:run)'] });
    await ctx.dataSource.query('INSERT INTO migrations (id, timestamp, name) VALUES ($1, $2, $3)', [
      row.id,
      row.timestamp,
      row.name,
    ]);
    await ctx.http.get('/health/ready').expect(200);
  });
});
