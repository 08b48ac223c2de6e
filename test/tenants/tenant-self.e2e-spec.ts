import { Clock } from '../../src/common/clock';
import { TenantSelfService } from '../../src/tenants/tenant-self.service';
import { TestContext, TestTenant } from '../support/test-app';
import { TestClock } from '../support/test-clock';
import { cardData, tokenApp } from '../support/token-factory';
import { expectProblem } from '../support/problems';

const DAY = 86_400_000;

describe('tenant self: GET/PUT/DELETE /tenants/self, usage, owner, security contact', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  const clock = new TestClock();
  beforeAll(async () => {
    ctx = await TestContext.create({ overrides: [{ provide: Clock, useValue: clock }] });
    tenant = await ctx.newTenant('Selfie');
  });
  afterAll(() => ctx.close());

  const self = (key = tenant.key) => ctx.http.get('/tenants/self').set('BT-API-KEY', key);

  it('reads and updates the tenant: name and string settings', async () => {
    const got = await self().expect(200);
    expect(got.body).toEqual({
      id: tenant.tenantId,
      owner_id: expect.any(String),
      name: 'Selfie',
      settings: {},
      created_by: null,
      created_at: expect.any(String),
      modified_by: null,
      modified_at: null,
    });
    const management = await ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key).expect(200);
    const put = await ctx.http
      .put('/tenants/self')
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'Selfie Inc', settings: { deduplicate_tokens: 'true' } })
      .expect(200);
    expect(put.body).toMatchObject({
      name: 'Selfie Inc',
      settings: { deduplicate_tokens: 'true' },
      modified_by: management.body.id,
    });
    expect((await self().expect(200)).body).toEqual(put.body);
    const bad = (body: object) => ctx.http.put('/tenants/self').set('BT-API-KEY', tenant.key).send(body);
    expectProblem(await bad({ settings: {} }), 400, ['name']);
    expectProblem(await bad({ name: 'x', settings: { a: 1 } }), 400, ['settings']);
    const reader = await ctx.newApplication(tenant, 'management', ['tenant:read']);
    expectProblem(await ctx.http.put('/tenants/self').set('BT-API-KEY', reader.key).send({ name: 'n' }), 403);
    const none = await ctx.newApplication(tenant, 'management', ['application:read']);
    expectProblem(await self(none.key), 403);
  });

  it('reports the owner and keeps a security contact', async () => {
    const owner = await ctx.http.get('/tenants/self/owner').set('BT-API-KEY', tenant.key).expect(200);
    expect(owner.body).toMatchObject({
      tenant_id: tenant.tenantId,
      role: 'OWNER',
      user: { email: 'owner+selfie@example.com' },
      created_date: owner.body.created_at,
    });
    const contact = () => ctx.http.get('/tenants/self/security-contact').set('BT-API-KEY', tenant.key);
    expect((await contact().expect(200)).body).toEqual({ email: null });
    const set = await ctx.http
      .put('/tenants/self/security-contact')
      .set('BT-API-KEY', tenant.key)
      .send({ email: 'Security@Example.com' })
      .expect(200);
    expect(set.body).toEqual({ email: 'security@example.com' });
    expect((await contact().expect(200)).body).toEqual({ email: 'security@example.com' });
    expectProblem(
      await ctx.http
        .put('/tenants/self/security-contact')
        .set('BT-API-KEY', tenant.key)
        .send({ email: 'nope' }),
      400,
      ['email'],
    );
  });

  it('reports live tokens by type and the monthly active ones', async () => {
    const other = await ctx.newTenant('Usage');
    clock.set(Date.UTC(2026, 10, 20));
    const app = await tokenApp(ctx, other, [], ['token:create', 'token:delete']);
    await app.api.create({ type: 'card', data: cardData() }).expect(201);
    clock.set(Date.UTC(2026, 9, 20));
    await app.api.create({ type: 'card', data: cardData() }).expect(201);
    await app.api.create({ type: 'token', data: 'a' }).expect(201);
    const gone = await app.api.create({ type: 'token', data: 'b' }).expect(201);
    await app.api.delete(gone.body.id).expect(204);
    clock.set(Date.UTC(2026, 10, 25));
    const report = await ctx.http.get('/tenants/self/reports/usage').set('BT-API-KEY', other.key).expect(200);
    expect(report.body).toEqual({
      total_tokens: 3,
      token_report: {
        metrics_by_type: {
          card: { count: 2, last_created_at: new Date(Date.UTC(2026, 10, 20)).toISOString() },
          token: { count: 1, last_created_at: new Date(Date.UTC(2026, 9, 20)).toISOString() },
        },
        total_tokens: 3,
        monthly_active_tokens: 1,
        included_monthly_active_tokens: 1,
      },
    });
    clock.reset();
  });

  it('deletes softly by the owner key only, refuses every key at once, and purges after the grace period', async () => {
    const doomed = await ctx.newTenant('Doomed');
    const other = await ctx.newApplication(doomed, 'management', ['tenant:update', 'tenant:read']);
    const app = await tokenApp(ctx, doomed, [], ['token:create']);
    await app.api.create({ type: 'token', data: 'kept for now' }).expect(201);
    expectProblem(await ctx.http.delete('/tenants/self').set('BT-API-KEY', other.key), 403);
    await ctx.http.delete('/tenants/self').set('BT-API-KEY', doomed.key).expect(204);
    for (const key of [doomed.key, other.key, app.key]) {
      expectProblem(await ctx.http.get('/applications/key').set('BT-API-KEY', key), 401);
    }
    const rows = async () =>
      (
        await ctx.dataSource.query('SELECT count(*)::int AS n FROM tokens WHERE tenant_id = $1', [
          doomed.tenantId,
        ])
      )[0].n as number;
    const purge = ctx.get(TenantSelfService);
    expect(await purge.purgeDeleted(new Date(Date.now() + 29 * DAY))).toBe(0);
    expect(await rows()).toBe(1);
    expect(await purge.purgeDeleted(new Date(Date.now() + 31 * DAY))).toBe(1);
    expect(await rows()).toBe(0);
    await self().expect(200);
  });
});
