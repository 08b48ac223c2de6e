import { BasisTheoryClient } from '@basis-theory/node-sdk';
import type { AddressInfo } from 'node:net';
import { TestContext, TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

describe('the official Node SDK reads the audit log unchanged', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let baseUrl: string;
  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    await ctx.vault.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(ctx.vault.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => ctx.close());

  it('client.logs.list with filters and client.logs.getEntityTypes', async () => {
    const app = await tokenApp(ctx, tenant);
    const id = (await app.api.create({ type: 'token', data: 'x' })).body.id as string;
    await app.api.get(id).expect(200);
    const client = new BasisTheoryClient({ apiKey: tenant.key, baseUrl });

    const page = await client.logs.list({ entityType: 'token', entityId: id, page: 1, size: 10 });
    expect(page.data.map((l) => [l.operation, l.entityId, l.actorId, l.actorType])).toEqual([
      ['read', id, app.id, 'application'],
      ['create', id, app.id, 'application'],
    ]);
    expect(page.data[0].tenantId).toBe(tenant.tenantId);
    expect(page.data[0].createdAt).toBeInstanceOf(Date);

    const later = await client.logs.list({ startDate: new Date(Date.now() + 3_600_000) });
    expect(later.data).toEqual([]);
    const earlier = await client.logs.list({ entityId: id, endDate: new Date(Date.now() + 3_600_000) });
    expect(earlier.data).toHaveLength(2);

    const types = await client.logs.getEntityTypes();
    expect(types).toContainEqual({ displayName: 'Token', value: 'token' });
  });
});
