import { TestContext } from '../support/test-app';

describe('health and front door', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('answers liveness and readiness without a key', async () => {
    await ctx.http.get('/health').expect(200, { status: 'ok' });
    await ctx.http.get('/health/ready').expect(200, { status: 'ok' });
  });

  it('serves the OpenAPI document', async () => {
    const res = await ctx.http.get('/docs-json').expect(200);
    expect(res.body.paths['/applications']).toBeDefined();
  });

  it('tells an authenticated caller who it is', async () => {
    const tenant = await ctx.newTenant();
    const res = await ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key).expect(200);
    expect(res.body).toMatchObject({ tenant_id: tenant.tenantId, type: 'management' });
    expect(res.body.key).toBeUndefined();
  });
});
