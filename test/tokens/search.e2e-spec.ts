import type { Permission } from '../../src/access/permissions';
import { TestContext, TestTenant } from '../support/test-app';
import { cardNumber, countTokens, rule, tokenApp, tokensApi, TokensApi } from '../support/token-factory';

const SEARCHER: Permission[] = ['token:create', 'token:read', 'token:update', 'token:delete', 'token:search'];

describe('POST /tokens/search', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let app: { key: string; api: TokensApi };

  interface SearchPage {
    pagination: { total_items: number };
    data: { id: string; data?: { number?: string } }[];
  }
  const search = async (
    key: string,
    query: string,
  ): Promise<{ status: number; ids: string[]; body: SearchPage }> => {
    const res = await tokensApi(ctx, key).search({ query });
    const body = res.body as SearchPage;
    return { status: res.status, ids: (body.data ?? []).map((t) => t.id), body };
  };

  const indexedCard = async (
    api: TokensApi,
    number = cardNumber(),
  ): Promise<{ id: string; number: string }> => {
    const res = await api
      .create({ type: 'card', data: { number }, search_indexes: ['{{ data.number }}'] })
      .expect(201);
    return { id: res.body.id, number };
  };

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    app = await tokenApp(ctx, tenant, [rule('/', 'mask', SEARCHER)]);
  });
  afterAll(() => ctx.close());

  it('refuses search indexes that render empty, naming the index, and creates nothing', async () => {
    const res = await app.api
      .create({ type: 'card', data: { number: cardNumber() }, search_indexes: ['{{ data.cvc }}'] })
      .expect(400);
    expect(Object.keys(res.body.errors)).toEqual(['search_indexes[0]']);
    expect(await countTokens(ctx, tenant.tenantId)).toBe(0);
  });

  it('applies the search transform: masked data for a mask rule', async () => {
    const card = await indexedCard(app.api);
    const found = await search(app.key, `data:${card.number}`);
    expect(found.ids).toEqual([card.id]);
    expect(found.body.data[0].data?.number).toBe(`XXXXXXXXXXXX${card.number.slice(-4)}`);
    expect(JSON.stringify(found.body)).not.toContain(card.number);
  });

  it('follows updates and deletes: old values stop matching, new ones match, deleted tokens vanish', async () => {
    const card = await indexedCard(app.api);
    const next = cardNumber();
    await app.api.patch(card.id, { data: { number: next } }).expect(200);
    expect((await search(app.key, `data:${card.number}`)).ids).toEqual([]);
    expect((await search(app.key, `data:${next}`)).ids).toEqual([card.id]);
    await app.api.delete(card.id).expect(204);
    expect((await search(app.key, `data:${next}`)).ids).toEqual([]);
  });

  it('needs token:search and only returns tokens in containers the rules cover', async () => {
    const reader = await tokenApp(ctx, tenant, [rule('/', 'reveal', ['token:read'])]);
    const card = await indexedCard(app.api);
    expect((await search(reader.key, `data:${card.number}`)).status).toBe(403);
    const generalOnly = await tokenApp(ctx, tenant, [rule('/general/', 'reveal', ['token:search'])]);
    const found = await search(generalOnly.key, `data:${card.number}`);
    expect(found.status).toBe(200);
    expect(found.ids).toEqual([]);
    expect(found.body.pagination.total_items).toBe(0);
  });

  it('never finds another tenant’s tokens, even by the same value', async () => {
    const number = cardNumber();
    const mine = await indexedCard(app.api, number);
    const other = await ctx.newTenant('Other');
    const theirs = await tokenApp(ctx, other, [rule('/', 'mask', SEARCHER)]);
    const theirCard = await indexedCard(theirs.api, number);
    expect((await search(app.key, `data:${number}`)).ids).toEqual([mine.id]);
    expect((await search(theirs.key, `data:${number}`)).ids).toEqual([theirCard.id]);
    expect((await search(app.key, `id:${theirCard.id}`)).ids).toEqual([]);
  });

  it('pages results with the shared pagination', async () => {
    const tag = `batch-${Date.now()}`;
    for (let i = 0; i < 3; i++) {
      await app.api.create({ type: 'token', data: `v${i}`, metadata: { tag } }).expect(201);
    }
    const res = await app.api.search({ query: `metadata.tag:${tag}`, size: 2, page: 2 }).expect(200);
    expect(res.body.pagination).toEqual({ total_items: 3, page_number: 2, page_size: 2, total_pages: 2 });
    expect(res.body.data).toHaveLength(1);
    await app.api.search({ query: 'data:x', size: 101 }).expect(400);
  });

  it('pages a data: search newest first, every match once, the total on every page', async () => {
    const shared = `shared-${Date.now()}`;
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await app.api
        .create({ type: 'token', data: `${shared}-${i}`, search_indexes: [shared] })
        .expect(201);
      created.push(res.body.id);
    }
    const pages = [];
    for (let page = 1; page <= 3; page++) {
      pages.push((await app.api.search({ query: `data:${shared}`, size: 2, page }).expect(200)).body);
    }
    const listed = (await app.api.list('?size=20').expect(200)).body.data.map((t: { id: string }) => t.id);
    const newestFirst = listed.filter((id: string) => created.includes(id));
    expect(pages.flatMap((p) => p.data.map((t: { id: string }) => t.id))).toEqual(newestFirst);
    expect(newestFirst).toHaveLength(5);
    expect(pages.map((p) => p.pagination.total_items)).toEqual([5, 5, 5]);
  });
});
