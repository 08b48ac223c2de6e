import { TestContext, TestTenant } from '../support/test-app';

describe('tokens smoke', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  it('creates, reads, patches, lists and deletes a card', async () => {
    const app = await ctx.newApplication(tenant, 'private', ['token:create', 'token:read', 'token:update', 'token:delete'], [
      { description: null, priority: 1, container: '/', transform: 'reveal', permissions: ['token:create', 'token:read', 'token:update', 'token:delete'] },
    ]);
    const created = await ctx.http
      .post('/tokens')
      .set('BT-API-KEY', app.key)
      .send({ type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2030 }, metadata: { k: 'V' } })
      .expect(201);
    expect(created.body.data).toEqual({ number: 'XXXXXXXXXXXX4242', expiration_month: 12, expiration_year: 2030 });
    const got = await ctx.http.get(`/tokens/${created.body.id}`).set('BT-API-KEY', app.key).expect(200);
    expect(got.body.data.number).toBe('4242424242424242');
    const list = await ctx.http.get('/tokens?metadata.k=v').set('BT-API-KEY', app.key).expect(200);
    expect(list.body.pagination.total_items).toBe(1);
    await ctx.http
      .patch(`/tokens/${created.body.id}`)
      .set('BT-API-KEY', app.key)
      .set('Content-Type', 'application/merge-patch+json')
      .send(JSON.stringify({ data: { expiration_month: 1 } }))
      .expect(200);
    await ctx.http.patch(`/tokens/${created.body.id}`).set('BT-API-KEY', app.key).send({ data: {} }).expect(415);
    await ctx.http.delete(`/tokens/${created.body.id}`).set('BT-API-KEY', app.key).expect(204);
    await ctx.http.get(`/tokens/${created.body.id}`).set('BT-API-KEY', app.key).expect(404);
  });
});
