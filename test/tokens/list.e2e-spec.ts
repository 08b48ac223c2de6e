import { Clock } from '../../src/common/clock';
import { TestContext } from '../support/test-app';
import { bankData, cardData, rule, tokenApp, TokensApi } from '../support/token-factory';

describe('GET /tokens', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());
  afterEach(() => jest.restoreAllMocks());

  /** A fresh tenant with a permission-only application, so each test sees only its own tokens. */
  async function freshApi(): Promise<TokensApi> {
    return (await tokenApp(ctx, await ctx.newTenant())).api;
  }

  const ids = (res: { body: { data: { id: string }[] } }): string[] => res.body.data.map((t) => t.id);

  it('GET /tokens/<id> returns the token', async () => {
    const api = await freshApi();
    const created = await api.create({ type: 'card', data: cardData(), metadata: { k: 'v' } }).expect(201);
    const got = await api.get(created.body.id).expect(200);
    expect(got.body).toEqual(created.body);
    await api.get('no-such-token').expect(404);
  });

  it('filters by repeatable id and type', async () => {
    const api = await freshApi();
    const card1 = (await api.create({ type: 'card', data: cardData() }).expect(201)).body.id;
    const card2 = (await api.create({ type: 'card', data: cardData() }).expect(201)).body.id;
    const bank = (await api.create({ type: 'bank', data: bankData() }).expect(201)).body.id;
    const token = (await api.create({ type: 'token', data: 'x' }).expect(201)).body.id;

    const byId = await api.list(`?id=${card1}&id=${bank}`).expect(200);
    expect(ids(byId).sort()).toEqual([card1, bank].sort());
    expect(byId.body.pagination.total_items).toBe(2);

    const oneId = await api.list(`?id=${token}`).expect(200);
    expect(ids(oneId)).toEqual([token]);

    const byType = await api.list('?type=card&type=bank').expect(200);
    expect(ids(byType).sort()).toEqual([card1, card2, bank].sort());

    const cards = await api.list('?type=card').expect(200);
    expect(ids(cards).sort()).toEqual([card1, card2].sort());

    const both = await api.list(`?type=card&id=${card1}&id=${token}`).expect(200);
    expect(ids(both)).toEqual([card1]);

    await api.list('?type=cash').expect(400);
  });

  it('filters by metadata.<key>: case-insensitive exact match, ANDed, a repeated key ignored', async () => {
    const api = await freshApi();
    const abc = (
      await api.create({ type: 'token', data: 'a', metadata: { k: 'abc', env: 'prod' } }).expect(201)
    ).body.id;
    const ab = (
      await api.create({ type: 'token', data: 'b', metadata: { k: 'ab', env: 'prod' } }).expect(201)
    ).body.id;
    const dev = (
      await api.create({ type: 'token', data: 'c', metadata: { k: 'ABC', env: 'dev' } }).expect(201)
    ).body.id;
    const none = (await api.create({ type: 'token', data: 'd' }).expect(201)).body.id;

    expect(ids(await api.list('?metadata.k=ABC').expect(200)).sort()).toEqual([abc, dev].sort());
    expect(ids(await api.list('?metadata.k=ab').expect(200))).toEqual([ab]);
    expect(ids(await api.list('?metadata.k=a').expect(200))).toEqual([]);
    expect(ids(await api.list('?metadata.k=abc&metadata.env=PROD').expect(200))).toEqual([abc]);
    expect(ids(await api.list('?metadata.k=abc&metadata.env=staging').expect(200))).toEqual([]);
    expect(ids(await api.list('?metadata.missing=abc').expect(200))).toEqual([]);

    // the filter on k is ignored, the one on env still applies
    const repeated = await api.list('?metadata.k=abc&metadata.k=ab&metadata.env=prod').expect(200);
    expect(ids(repeated).sort()).toEqual([abc, ab].sort());
    const onlyRepeated = await api.list('?metadata.k=zzz&metadata.k=yyy').expect(200);
    expect(ids(onlyRepeated).sort()).toEqual([abc, ab, dev, none].sort());
  });

  it('sorts newest first and paginates with totals', async () => {
    const api = await freshApi();
    const clock = ctx.get(Clock);
    const created: string[] = [];
    const start = Date.now();
    for (let i = 0; i < 5; i++) {
      jest.spyOn(clock, 'now').mockReturnValue(new Date(start + i * 1000));
      created.push((await api.create({ type: 'token', data: `value-${i}` }).expect(201)).body.id);
    }
    jest.restoreAllMocks();
    const newestFirst = [...created].reverse();

    const all = await api.list().expect(200);
    expect(ids(all)).toEqual(newestFirst);
    expect(all.body.pagination).toEqual({ total_items: 5, page_number: 1, page_size: 20, total_pages: 1 });

    const page2 = await api.list('?size=2&page=2').expect(200);
    expect(ids(page2)).toEqual(newestFirst.slice(2, 4));
    expect(page2.body.pagination).toEqual({ total_items: 5, page_number: 2, page_size: 2, total_pages: 3 });

    const page3 = await api.list('?size=2&page=3').expect(200);
    expect(ids(page3)).toEqual(newestFirst.slice(4));

    const past = await api.list('?size=2&page=4').expect(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.pagination.total_items).toBe(5);
  });

  it('paginates a metadata filter newest first, ties in id order, the total on every page', async () => {
    const api = await freshApi();
    const clock = ctx.get(Clock);
    const start = Date.now();
    const at = (seconds: number, data: string, k: string): Promise<string> => {
      jest.spyOn(clock, 'now').mockReturnValue(new Date(start + seconds * 1000));
      return api
        .create({ type: 'token', data, metadata: { k } })
        .expect(201)
        .then((res) => (res.body as { id: string }).id);
    };
    const older = [await at(0, 'a', 'Page'), await at(0, 'b', 'page'), await at(0, 'c', 'PAGE')];
    await at(1, 'other', 'elsewhere');
    const newest = await at(2, 'd', 'page');
    jest.restoreAllMocks();
    const expected = [newest, ...[...older].sort()];

    const pages = [];
    for (let page = 1; page <= 3; page++) {
      pages.push((await api.list(`?metadata.k=page&size=2&page=${page}`).expect(200)).body);
    }
    expect(pages.flatMap((p) => p.data.map((t: { id: string }) => t.id))).toEqual(expected);
    for (const [i, page] of pages.entries()) {
      expect(page.pagination).toEqual({ total_items: 4, page_number: i + 1, page_size: 2, total_pages: 2 });
    }
    expect(pages[2].data).toEqual([]);
  });

  it.each(['?foo=1', '?size=0', '?size=101', '?page=0', '?size=abc', '?metadata=x'])(
    'answers 400 for the query %s',
    async (query) => {
      const api = await freshApi();
      const res = await api.list(query).expect(400);
      expect(res.body.status).toBe(400);
    },
  );

  it('lists only tokens the caller may read, and counts only those', async () => {
    const tenant = await ctx.newTenant();
    const writer = await tokenApp(ctx, tenant);
    const cards: string[] = [];
    for (let i = 0; i < 3; i++) {
      cards.push((await writer.api.create({ type: 'card', data: cardData() }).expect(201)).body.id);
    }
    await writer.api.create({ type: 'token', data: 'general' }).expect(201);
    await writer.api.create({ type: 'bank', data: bankData() }).expect(201);
    await writer.api.create({ type: 'card', data: cardData(), containers: ['/pcix/'] }).expect(201);

    const pciReader = await tokenApp(ctx, tenant, [rule('/pci/', 'mask', ['token:read'])], ['token:read']);
    const res = await pciReader.api.list().expect(200);
    expect(ids(res).sort()).toEqual([...cards].sort());
    expect(res.body.pagination.total_items).toBe(3);
    expect(res.body.data.every((t: { type: string }) => t.type === 'card')).toBe(true);

    const paged = await pciReader.api.list('?size=2&page=2').expect(200);
    expect(paged.body.data).toHaveLength(1);
    expect(paged.body.pagination).toMatchObject({ total_items: 3, total_pages: 2 });

    const all = await writer.api.list().expect(200);
    expect(all.body.pagination.total_items).toBe(6);
  });

  it('matches rule containers literally and case-insensitively, as get does', async () => {
    const tenant = await ctx.newTenant();
    const writer = await tokenApp(ctx, tenant);
    const underscore = (
      await writer.api.create({ type: 'token', data: 'a', containers: ['/a_b/'] }).expect(201)
    ).body.id;
    const lookalike = (
      await writer.api.create({ type: 'token', data: 'b', containers: ['/axb/'] }).expect(201)
    ).body.id;
    const literal = await tokenApp(ctx, tenant, [rule('/a_b/', 'mask', ['token:read'])], ['token:read']);
    expect(ids(await literal.api.list().expect(200))).toEqual([underscore]);
    await literal.api.get(lookalike).expect(403);

    // a rule stored without going through the applications API keeps its spelling
    const upper = await tokenApp(ctx, tenant, [rule('/A_B/', 'mask', ['token:read'])], ['token:read']);
    await upper.api.get(underscore).expect(200);
    expect(ids(await upper.api.list().expect(200))).toEqual([underscore]);
  });
});
