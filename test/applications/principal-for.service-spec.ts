import { ApplicationPrincipals } from '../../src/applications/application-principals.service';
import type { VaultApp } from '../../src/app';
import { TestContext, TestTenant } from '../support/test-app';
import { rule } from '../support/token-factory';

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

/** How reactors and proxies act as their stored application, without its key. */
describe('ApplicationPrincipals.principalFor', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let service: ApplicationPrincipals;
  let replica: VaultApp | null = null;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant('Acme');
    service = ctx.get(ApplicationPrincipals);
  });
  afterAll(async () => {
    await ctx.close();
  });

  it('gives the stored permissions and rules, like authenticate does with the key', async () => {
    const app = await ctx.newApplication(
      tenant,
      'private',
      ['token:read'],
      [rule('/pci/', 'reveal', ['token:use'])],
    );
    const principal = await service.principalFor(tenant.tenantId, app.id);
    expect(principal).toEqual(await service.authenticate(app.key));
    expect(principal).toMatchObject({
      tenantId: tenant.tenantId,
      applicationId: app.id,
      applicationType: 'private',
    });
    expect([...(principal?.permissions ?? [])].sort()).toEqual(['token:read', 'token:use']);
  });

  it('is null for another tenant’s application and for an unknown one', async () => {
    const other = await ctx.newTenant('Other');
    const theirs = await ctx.newApplication(other, 'private', ['token:read']);
    expect(await service.principalFor(tenant.tenantId, theirs.id)).toBeNull();
    expect(await service.principalFor(tenant.tenantId, '00000000-0000-4000-8000-000000000000')).toBeNull();
  });

  it('sees an update or a deletion at once, though cached', async () => {
    const app = await ctx.newApplication(tenant, 'private', ['token:read']);
    expect((await service.principalFor(tenant.tenantId, app.id))?.permissions.has('token:read')).toBe(true);
    await ctx.http
      .put(`/applications/${app.id}`)
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'narrowed', permissions: ['token:create'] })
      .expect(200);
    const narrowed = await service.principalFor(tenant.tenantId, app.id);
    expect([...(narrowed?.permissions ?? [])]).toEqual(['token:create']);
    await ctx.http.delete(`/applications/${app.id}`).set('BT-API-KEY', tenant.key).expect(204);
    expect(await service.principalFor(tenant.tenantId, app.id)).toBeNull();
  });

  onPostgres('is evicted on another replica through NOTIFY', async () => {
    replica = await ctx.secondInstance();
    const remote = replica.app.get(ApplicationPrincipals);
    const app = await ctx.newApplication(tenant, 'private', ['token:read']);
    expect(await remote.principalFor(tenant.tenantId, app.id)).not.toBeNull();
    await ctx.http.delete(`/applications/${app.id}`).set('BT-API-KEY', tenant.key).expect(204);
    let gone = false;
    for (const until = Date.now() + 2000; Date.now() < until && !gone;) {
      gone = (await remote.principalFor(tenant.tenantId, app.id)) === null;
      if (!gone) {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    // Far below the cache TTL (10 s): only the notification explains it.
    expect(gone).toBe(true);
  });
});
