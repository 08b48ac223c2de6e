import type { Permission } from '../../src/access/permissions';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, cardNumber, rule, tokenApp, TokensApi } from '../support/token-factory';
import { expectProblem } from '../support/problems';

const ALL: Permission[] = ['token:create', 'token:read', 'token:search'];

interface CursorPage {
  pagination: { page_size: number; next: string | null };
  data: { id: string; type: string; data?: unknown; metadata?: Record<string, string> }[];
}

describe('v2 token lists: GET /v2/tokens and POST /v2/tokens/search', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  async function fresh(
    rules = [rule('/', 'mask', ALL)],
  ): Promise<{ tenant: TestTenant; key: string; api: TokensApi }> {
    const tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant, rules, rules.length === 0 ? ALL : []);
    return { tenant, key: app.key, api: app.api };
  }

  const listV2 = (key: string, query: Record<string, string | number> = {}) =>
    ctx.http.get('/v2/tokens').query(query).set('BT-API-KEY', key);
  const searchV2 = (key: string, body: object) =>
    ctx.http.post('/v2/tokens/search').set('BT-API-KEY', key).send(body);

  /** Every page from the first, following pagination.next. */
  async function walk(
    next: (start?: string) => Promise<{ status: number; body: CursorPage }>,
  ): Promise<string[]> {
    const ids: string[] = [];
    let start: string | undefined;
    for (let i = 0; i < 100; i++) {
      const res = await next(start);
      expect(res.status).toBe(200);
      ids.push(...res.body.data.map((t) => t.id));
      if (res.body.pagination.next === null) {
        return ids;
      }
      start = res.body.pagination.next;
    }
    throw new Error('no last page');
  }

  it('pages newest first with opaque cursors, in the order of GET /tokens, and ends with next: null', async () => {
    const { key, api } = await fresh([rule('/', 'reveal', ALL)]);
    for (let i = 0; i < 5; i++) {
      await api.create({ type: 'token', data: `v${i}` }).expect(201);
    }
    const first = await listV2(key, { size: 2 }).expect(200);
    expect(first.body.pagination).toEqual({ page_size: 2, next: expect.any(String) });
    expect(first.body.data).toHaveLength(2);
    expect(JSON.stringify(first.body.pagination.next)).not.toContain('"v');
    const v1 = await api.list('?size=100').expect(200);
    const all = await walk((start) => listV2(key, { size: 2, ...(start ? { start } : {}) }));
    expect(all).toEqual(v1.body.data.map((t: { id: string }) => t.id));
    const whole = await listV2(key, { size: 5 }).expect(200);
    expect(whole.body.pagination.next).toBeNull();
    expect(whole.body.data[0].data).toBe('v4');
  });

  it('walks tokens created in the same instant one by one, and stays stable while tokens are added', async () => {
    const { key, api } = await fresh();
    const tied = await api.tokenize(['a', 'b', 'c', 'd', 'e']).expect(200);
    expect(tied.body).toHaveLength(5);
    const first = await listV2(key, { size: 2 }).expect(200);
    const seen: string[] = first.body.data.map((t: { id: string }) => t.id);
    const added = await api.create({ type: 'token', data: 'late' }).expect(201);
    const rest = await walk((start) => listV2(key, { size: 1, start: start ?? first.body.pagination.next }));
    seen.push(...rest);
    expect([...seen].sort()).toEqual([...tied.body].sort());
    expect(seen).not.toContain(added.body.id);
    expect(new Set(seen).size).toBe(5);
  });

  it('refuses forged, foreign and other-listing cursors with a 400 on start', async () => {
    const { key, api } = await fresh();
    for (let i = 0; i < 3; i++) {
      await api.create({ type: 'token', data: `f${i}` }).expect(201);
    }
    const next = (await listV2(key, { size: 1 }).expect(200)).body.pagination.next as string;
    const [payload, signature] = next.split('.');
    const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const edited = Buffer.from(JSON.stringify({ ...body, a: '2999-01-01T00:00:00.000000Z' })).toString(
      'base64url',
    );
    const other = await fresh();
    for (const start of [
      `${edited}.${signature}`,
      // The last character changed (to 'x', or to 'y' when it is an 'x': one signature in 64).
      `${payload}.${signature.slice(0, -1)}${signature.endsWith('x') ? 'y' : 'x'}`,
      'garbage',
      `${payload}.`,
      '.'.repeat(5),
    ]) {
      expectProblem(await listV2(key, { size: 1, start }), 400, ['start']);
    }
    expectProblem(await listV2(other.key, { size: 1, start: next }), 400, ['start']);
    expectProblem(await listV2(key, { size: 1, start: next, type: 'card' }), 400, ['start']);
    expectProblem(await searchV2(key, { query: 'type:token', start: next, size: 1 }), 400, ['start']);
    expectProblem(await listV2(key, { size: 1, start: 'x'.repeat(1001) }), 400, ['start']);
    await listV2(key, { size: 1, start: next }).expect(200);
  });

  it('filters by type, container, fingerprint and metadata, and validates them', async () => {
    const { key, api } = await fresh();
    const card = await api
      .create({ type: 'card', data: cardData(), metadata: { Customer: 'Acme' } })
      .expect(201);
    const other = await api
      .create({ type: 'token', data: 'x', containers: ['/general/low/'], metadata: { customer: 'acme' } })
      .expect(201);
    await api.create({ type: 'token', data: 'y' }).expect(201);
    const ids = async (query: Record<string, string>) =>
      (await listV2(key, query).expect(200)).body.data.map((t: { id: string }) => t.id);
    expect(await ids({ type: 'card' })).toEqual([card.body.id]);
    expect(await ids({ container: '/PCI/' })).toEqual([card.body.id]);
    expect(await ids({ container: '/general/low/' })).toEqual([other.body.id]);
    expect(await ids({ fingerprint: card.body.fingerprint })).toEqual([card.body.id]);
    expect((await ids({ metadata: JSON.stringify({ Customer: 'ACME' }) })).sort()).toEqual([card.body.id]);
    expect(await ids({ metadata: JSON.stringify({ customer: 'acme' }) })).toEqual([other.body.id]);
    expectProblem(await listV2(key, { type: 'cash' }), 400, ['type']);
    expectProblem(await listV2(key, { container: 'pci' }), 400, ['container']);
    expectProblem(await listV2(key, { metadata: '[1]' }), 400, ['metadata']);
    expectProblem(await listV2(key, { metadata: '{"a":1}' }), 400, ['metadata']);
    expectProblem(await listV2(key, { size: 101 }), 400, ['size']);
    expectProblem(await listV2(key, { size: 0 }), 400, ['size']);
  });

  it('applies the access rules and masks of v1: masked cards, hidden containers, 403 without the permission', async () => {
    const tenant = await ctx.newTenant();
    const writer = await tokenApp(ctx, tenant, [], ['token:create']);
    const number = cardNumber();
    const card = await writer.api.create({ type: 'card', data: cardData({ number }) }).expect(201);
    await writer.api.create({ type: 'token', data: 'secret' }).expect(201);
    const reader = await tokenApp(ctx, tenant, [rule('/pci/', 'mask', ['token:read', 'token:search'])]);
    const page = await listV2(reader.key).expect(200);
    expect(page.body.data.map((t: { id: string }) => t.id)).toEqual([card.body.id]);
    expect(page.body.data[0].data.number).toBe(`${'X'.repeat(number.length - 4)}${number.slice(-4)}`);
    expect(JSON.stringify(page.body)).not.toContain(number);
    const revealer = await tokenApp(ctx, tenant, [rule('/pci/', 'reveal', ['token:read'])]);
    expect((await listV2(revealer.key).expect(200)).body.data[0].data.number).toBe(number);
    expectProblem(await listV2(writer.key), 403);
    expectProblem(await searchV2(revealer.key, { query: 'type:card' }), 403);
    const stranger = await fresh();
    expect((await listV2(stranger.key).expect(200)).body.data).toEqual([]);
  });

  it('searches with the v1 query language and pages the results', async () => {
    const { key, api } = await fresh();
    const number = cardNumber();
    const indexed = [];
    for (let i = 0; i < 3; i++) {
      indexed.push(
        (
          await api
            .create({
              type: 'card',
              data: cardData({ number }),
              metadata: { n: `${i}` },
              search_indexes: ['{{ data.number }}'],
            })
            .expect(201)
        ).body.id,
      );
    }
    await api.create({ type: 'token', data: 'noise' }).expect(201);
    const found = await walk((start) =>
      searchV2(key, { query: `data:${number}`, size: 2, ...(start ? { start } : {}) }),
    );
    expect([...found].sort()).toEqual([...indexed].sort());
    const one = await searchV2(key, { query: `data:${number} AND metadata.n:1` }).expect(200);
    expect(one.body.data.map((t: { id: string }) => t.id)).toEqual([indexed[1]]);
    expect(one.body.data[0].data.number).not.toBe(number);
    const everything = await searchV2(key, {}).expect(200);
    expect(everything.body.data).toHaveLength(4);
    const none = await searchV2(key, { query: `id:${indexed[0]} id:${indexed[1]}` }).expect(200);
    expect(none.body).toEqual({ pagination: { page_size: 20, next: null }, data: [] });
    expectProblem(await searchV2(key, { query: 'nope:1' }), 400, ['query']);
  });
});
