import { AuditChain } from '../../src/audit/audit-chain.service';
import { auditRows, eventually, logsApi, recordsOf } from '../support/audit';
import { TestContext } from '../support/test-app';
import { cardData, rule, tokenApp } from '../support/token-factory';

describe('audit records of token actions', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('records create, read (with its transform), update, list, search and delete, with actor and origin', async () => {
    const tenant = await ctx.newTenant();
    const app = await tokenApp(
      ctx,
      tenant,
      [],
      ['token:create', 'token:read', 'token:update', 'token:delete', 'token:search'],
    );
    const created = await app.api
      .create({ type: 'card', data: cardData() })
      .set('User-Agent', 'audit-test/1');
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const [create] = await recordsOf(ctx, tenant.tenantId, 'create', id);
    expect(create).toMatchObject({
      actor_id: app.id,
      actor_type: 'application',
      entity_type: 'token',
      outcome: 'success',
      user_agent: 'audit-test/1',
      request_id: created.headers['bt-trace-id'],
    });
    expect(create.remote_address).toMatch(/127\.0\.0\.1|::1/);

    expect((await app.api.get(id)).status).toBe(200);
    const reads = await recordsOf(ctx, tenant.tenantId, 'read', id);
    expect(reads).toHaveLength(1);
    expect(reads[0].message).toBe('Token read (mask)');

    expect((await app.api.patch(id, { metadata: { a: 'b' } })).status).toBe(200);
    expect(await recordsOf(ctx, tenant.tenantId, 'update', id)).toHaveLength(1);

    expect((await app.api.list()).status).toBe(200);
    const [list] = await recordsOf(ctx, tenant.tenantId, 'list', null);
    expect(list.message).toContain(id);

    expect((await app.api.search({ query: `id:${id}` })).status).toBe(200);
    expect((await recordsOf(ctx, tenant.tenantId, 'search', null))[0].message).toContain(id);

    expect((await app.api.delete(id)).status).toBe(204);
    expect(await recordsOf(ctx, tenant.tenantId, 'delete', id)).toHaveLength(1);
  });

  it('leaves nothing of a refused create: a duplicate id gets 409, and no audit record or search-index row of its own', async () => {
    const tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant);
    const id = 'audit-dup:card';
    const first = { id, type: 'token', data: 'first value', search_indexes: ['{{ data }}'] };
    expect((await app.api.create(first)).status).toBe(201);
    const indexRows = (): Promise<{ hash: string }[]> =>
      ctx.dataSource.query('SELECT hash FROM token_search_indexes WHERE tenant_id = $1 AND token_id = $2', [
        tenant.tenantId,
        id,
      ]);
    const before = await indexRows();
    expect(before).toHaveLength(1);

    const second = { ...first, data: 'second value' };
    expect((await app.api.create(second)).status).toBe(409);
    expect(await recordsOf(ctx, tenant.tenantId, 'create', id)).toHaveLength(1);
    expect(await indexRows()).toEqual(before);
  });

  it('records a tokenize request once, naming every token it made', async () => {
    const tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant);
    const res = await app.api.tokenize({ a: 'x', b: { type: 'card', data: cardData() } });
    expect(res.status).toBe(200);
    const [record] = await recordsOf(ctx, tenant.tenantId, 'tokenize', null);
    expect(record.message).toContain(res.body.a);
    expect(record.message).toContain(res.body.b.id);
  });

  it('writes nothing for a write that rolls back, and a denied record for a 403', async () => {
    const tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant, [rule('/general/', 'mask', ['token:create', 'token:read'])]);
    const refused = await app.api.create({ type: 'card', data: cardData() });
    expect(refused.status).toBe(403);
    expect(await recordsOf(ctx, tenant.tenantId, 'create', null)).toHaveLength(0);
    const denied = await eventually(async () => {
      const rows = (await auditRows(ctx, tenant.tenantId)).filter((r) => r.outcome === 'denied');
      return rows.length > 0 ? rows : null;
    });
    expect(denied).toHaveLength(1);
    expect(denied[0]).toMatchObject({ actor_id: app.id, entity_type: 'token', operation: 'post /tokens' });
  });

  it('records a 403 for a missing permission as the caller’s, naming the route and the token', async () => {
    const tenant = await ctx.newTenant();
    const writer = await tokenApp(ctx, tenant, [], ['token:create']);
    const id = (await writer.api.create({ type: 'token', data: 'x' })).body.id as string;
    expect((await writer.api.get(id)).status).toBe(403);
    const denied = await eventually(async () => {
      const rows = (await auditRows(ctx, tenant.tenantId)).filter((r) => r.outcome === 'denied');
      return rows.length > 0 ? rows : null;
    });
    expect(denied).toHaveLength(1);
    expect(denied[0]).toMatchObject({
      actor_id: writer.id,
      entity_type: 'token',
      entity_id: id,
      operation: 'get /tokens/:id',
    });
  });

  it('counts failed authentications per key prefix, never the key', async () => {
    const key = 'key_ZZZZ' + 'x'.repeat(40);
    expect((await ctx.http.get('/tokens').set('BT-API-KEY', key)).status).toBe(401);
    const rows = await eventually(async () => {
      const found: { key_prefix: string; attempts: number }[] = await ctx.dataSource.query(
        "SELECT key_prefix, attempts FROM audit_auth_failures WHERE key_prefix = 'key_ZZZZ'",
      );
      return found.length > 0 ? found : null;
    });
    expect(rows[0].attempts).toBe(1);
  });

  it('serves GET /logs with filters, records the read, and chains what it listed', async () => {
    const tenant = await ctx.newTenant();
    const other = await ctx.newTenant('Other');
    const app = await tokenApp(ctx, tenant);
    const id = (await app.api.create({ type: 'token', data: 'x' })).body.id as string;
    await app.api.get(id);
    const logs = logsApi(ctx, tenant);
    const res = await logs(`?entity_type=token&entity_id=${encodeURIComponent(id)}`);
    expect(res.status).toBe(200);
    expect(res.body.pagination).toMatchObject({ total_items: 2, page_number: 1 });
    expect(res.body.data.map((l: { operation: string }) => l.operation)).toEqual(['read', 'create']);
    expect((await logs('?operation=create&outcome=success')).body.data).toHaveLength(1);
    expect((await logs(`?actor_id=${app.id}`)).body.pagination.total_items).toBe(2);
    expect((await logs('?start_date=2999-01-01T00:00:00Z')).body.data).toEqual([]);
    expect((await logsApi(ctx, other)(`?entity_id=${encodeURIComponent(id)}`)).body.data).toEqual([]);
    expect((await logs('?outcome=maybe')).status).toBe(400);
    expect(await recordsOf(ctx, tenant.tenantId, 'read', null)).toHaveLength(4);
    const types = await ctx.http.get('/logs/entity-types').set('BT-API-KEY', tenant.key);
    expect(types.body).toContainEqual({ display_name: 'Token', value: 'token' });
    // A private application lacks log:read.
    expect((await ctx.http.get('/logs').set('BT-API-KEY', app.key)).status).toBe(403);

    const chain = ctx.get(AuditChain);
    expect(await chain.sealAll()).toBeGreaterThan(0);
    expect(await chain.verify(tenant.tenantId)).toBeNull();
  });
});
