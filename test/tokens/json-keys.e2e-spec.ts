import { TestContext, TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp, TokensApi } from '../support/token-factory';

/** Written as text: a `__proto__` member would not survive JSON.stringify of an object literal. */
const DATA = '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"plain":"v"}';
const METADATA = '{"__proto__":"p","constructor":"c","plain":"m"}';
const expectedData = JSON.parse(DATA) as unknown;
const expectedMetadata = JSON.parse(METADATA) as unknown;

/** Token data and metadata are stored and returned exactly as sent, whatever the member names. */
describe('JSON members named __proto__ and constructor', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: TokensApi;
  let key: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant, [
      rule('/', 'reveal', ['token:create', 'token:read', 'token:update', 'token:search']),
    ]);
    api = app.api;
    key = app.key;
  });
  afterAll(() => ctx.close());

  const post = (path: string, body: string) =>
    ctx.http.post(path).set('BT-API-KEY', key).set('Content-Type', 'application/json').send(body);

  function expectUnpolluted(): void {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  }

  it('POST /tokens keeps them in data, metadata and the mask', async () => {
    const created = await post(
      '/tokens',
      `{"type":"token","data":${DATA},"metadata":${METADATA},"mask":{"constructor":"{{ data.plain }}"}}`,
    ).expect(201);
    expect(created.body.metadata).toEqual(expectedMetadata);
    expect(created.body.mask).toEqual(JSON.parse('{"constructor":"v"}'));
    const got = await api.get(created.body.id).expect(200);
    expect(got.body.data).toEqual(expectedData);
    expect(Object.keys(got.body.data)).toEqual(['__proto__', 'constructor', 'plain']);
    expect(got.body.metadata).toEqual(expectedMetadata);
    expectUnpolluted();
  });

  it('PATCH merges them like any other member', async () => {
    const created = await api.create({ type: 'token', data: { plain: 'v' } }).expect(201);
    await ctx.http
      .patch(`/tokens/${created.body.id}`)
      .set('BT-API-KEY', key)
      .set('Content-Type', 'application/merge-patch+json')
      .send(`{"data":${DATA},"metadata":${METADATA}}`)
      .expect(200);
    const got = await api.get(created.body.id).expect(200);
    expect(got.body.data).toEqual(expectedData);
    expect(got.body.metadata).toEqual(expectedMetadata);
    expectUnpolluted();
  });

  it('metadata filters and search terms on such keys match instead of being dropped', async () => {
    const created = await post(
      '/tokens',
      '{"type":"token","data":"x","metadata":{"__proto__":"filtered","plain":"f"}}',
    ).expect(201);
    await api.create({ type: 'token', data: 'y', metadata: { plain: 'f' } }).expect(201);
    const listed = await api.list('?metadata.__proto__=Filtered&metadata.plain=f').expect(200);
    expect(listed.body.data.map((t: { id: string }) => t.id)).toEqual([created.body.id]);
    const found = await post(
      '/tokens/search',
      JSON.stringify({ query: 'metadata.__proto__:filtered metadata.plain:f' }),
    ).expect(200);
    expect(found.body.data.map((t: { id: string }) => t.id)).toEqual([created.body.id]);
  });

  it('a /tokenize definition with a __proto__ member is a 400 naming it, and creates nothing', async () => {
    const before = await api.list().expect(200);
    const res = await post(
      '/tokenize',
      `{"type":"card","data":${JSON.stringify(cardData())},"__proto__":{"x":1}}`,
    ).expect(400);
    expect(Object.keys(res.body.errors)).toEqual(['__proto__']);
    expect((await api.list().expect(200)).body.pagination.total_items).toBe(
      before.body.pagination.total_items,
    );
    expectUnpolluted();
  });
});
