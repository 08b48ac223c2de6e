import type { ApplicationType } from '../../src/access/application-type';
import { TestContext, TestTenant } from '../support/test-app';
import { applicationBody, createApplication } from '../support/application-factory';
import { expectProblem } from '../support/problems';

const CREATED = 25;
const TYPES: ApplicationType[] = ['private', 'public', 'management'];
const PERMISSION_OF: Record<ApplicationType, string> = {
  private: 'token:read',
  public: 'token:create',
  management: 'application:read',
};

interface Listed {
  id: string;
  type: ApplicationType;
  name: string;
}

describe('pagination of GET /applications', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  /** Every application of the tenant, newest first (the management application made with the tenant is last). */
  let newestFirst: Listed[];

  const list = (query: Record<string, string | number | string[]> = {}) =>
    ctx.http.get('/applications').query(query).set('BT-API-KEY', tenant.key);

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    const self = await ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key).expect(200);
    const created: Listed[] = [{ id: self.body.id, type: 'management', name: self.body.name }];
    for (let i = 1; i <= CREATED; i++) {
      const type = TYPES[i % TYPES.length];
      const res = await createApplication(
        ctx,
        tenant,
        applicationBody({ name: `App ${i}`, type, permissions: [PERMISSION_OF[type]] }),
      );
      expect(res.status).toBe(201);
      created.push({ id: res.body.id, type, name: res.body.name });
    }
    newestFirst = created.reverse();
    // Another tenant's applications must never be counted
    const other = await ctx.newTenant('Other');
    await ctx.newApplication(other, 'private', ['token:read']);
  });
  afterAll(() => ctx.close());

  it('defaults to page 1 of 20 and counts every application of the tenant', async () => {
    const res = await list().expect(200);
    expect(res.body.pagination).toEqual({
      total_items: CREATED + 1,
      page_number: 1,
      page_size: 20,
      total_pages: 2,
    });
    expect(res.body.data.map((a: Listed) => a.id)).toEqual(newestFirst.slice(0, 20).map((a) => a.id));
    expect(res.body.data.every((a: { key?: string }) => a.key === undefined)).toBe(true);
  });

  it('returns the rest on the last page and an empty page past the end', async () => {
    const last = await list({ page: 2 }).expect(200);
    expect(last.body.pagination).toEqual({ total_items: 26, page_number: 2, page_size: 20, total_pages: 2 });
    expect(last.body.data.map((a: Listed) => a.id)).toEqual(newestFirst.slice(20).map((a) => a.id));

    for (const page of [3, 1000, 2147483647]) {
      const past = await list({ page }).expect(200);
      expect(past.body).toEqual({
        pagination: { total_items: 26, page_number: page, page_size: 20, total_pages: 2 },
        data: [],
      });
    }
  });

  it('accepts sizes up to 100', async () => {
    const all = await list({ size: 100 }).expect(200);
    expect(all.body.pagination).toEqual({ total_items: 26, page_number: 1, page_size: 100, total_pages: 1 });
    expect(all.body.data.map((a: Listed) => a.id)).toEqual(newestFirst.map((a) => a.id));

    const one = await list({ size: 1, page: 26 }).expect(200);
    expect(one.body.pagination).toEqual({ total_items: 26, page_number: 26, page_size: 1, total_pages: 26 });
    expect(one.body.data).toEqual([expect.objectContaining({ id: newestFirst[25].id, type: 'management' })]);
  });

  it('walks every page exactly once, newest first', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const res = await list({ size: 7, page }).expect(200);
      expect(res.body.pagination).toEqual({
        total_items: 26,
        page_number: page,
        page_size: 7,
        total_pages: 4,
      });
      expect(res.body.data).toHaveLength(page < 4 ? 7 : 5);
      seen.push(...res.body.data.map((a: Listed) => a.id));
    }
    expect(seen).toEqual(newestFirst.map((a) => a.id));
    const createdAt = (await list({ size: 100 })).body.data.map((a: { created_at: string }) =>
      Date.parse(a.created_at),
    );
    expect(createdAt).toEqual([...createdAt].sort((a, b) => b - a));
  });

  it.each<[string, Record<string, string | number>, string]>([
    ['size over 100', { size: 101 }, 'size'],
    ['size 0', { size: 0 }, 'size'],
    ['size not a number', { size: 'abc' }, 'size'],
    ['size not an integer', { size: 2.5 }, 'size'],
    ['page 0', { page: 0 }, 'page'],
    ['a negative page', { page: -1 }, 'page'],
    ['page not a number', { page: 'abc' }, 'page'],
    ['page beyond int32', { page: '2147483648' }, 'page'],
  ])('answers 400 for %s', async (_label, query, field) => {
    expectProblem(await list(query), 400, [field]);
  });

  it('filters by id, repeatable, within the tenant', async () => {
    const [a, b, c] = newestFirst;
    const one = await list({ id: b.id }).expect(200);
    expect(one.body.data.map((x: Listed) => x.id)).toEqual([b.id]);
    expect(one.body.pagination).toEqual({ total_items: 1, page_number: 1, page_size: 20, total_pages: 1 });

    const two = await list({ id: [c.id, a.id, '3f0b5d8e-7a1c-4e2b-9d6f-0a1b2c3d4e5f'] }).expect(200);
    expect(two.body.data.map((x: Listed) => x.id)).toEqual([a.id, c.id]);
    expect(two.body.pagination.total_items).toBe(2);

    expectProblem(await list({ id: [a.id, 'not-a-uuid'] }), 400, ['id']);
  });

  it('filters by type, repeatable, and paginates the filtered list', async () => {
    const countOf = (types: ApplicationType[]): number =>
      newestFirst.filter((a) => types.includes(a.type)).length;

    const publics = await list({ type: 'public', size: 100 }).expect(200);
    expect(publics.body.data.map((x: Listed) => x.id)).toEqual(
      newestFirst.filter((a) => a.type === 'public').map((a) => a.id),
    );
    expect(publics.body.pagination.total_items).toBe(countOf(['public']));

    const two = await list({ type: ['public', 'management'], size: 3, page: 2 }).expect(200);
    const expected = newestFirst.filter((a) => a.type !== 'private');
    expect(two.body.pagination).toEqual({
      total_items: expected.length,
      page_number: 2,
      page_size: 3,
      total_pages: Math.ceil(expected.length / 3),
    });
    expect(two.body.data.map((x: Listed) => x.id)).toEqual(expected.slice(3, 6).map((a) => a.id));

    const both = await list({ type: 'management', id: [newestFirst[0].id, newestFirst[25].id] }).expect(200);
    expect(both.body.data.map((x: Listed) => x.id)).toEqual(
      [newestFirst[0], newestFirst[25]].filter((a) => a.type === 'management').map((a) => a.id),
    );

    expectProblem(await list({ type: ['public', 'admin'] }), 400, ['type']);
  });
});
