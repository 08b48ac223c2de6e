import { auditRows, LogEntry } from '../support/audit';
import { statementsOf } from '../support/statements';
import { TestContext, TestTenant } from '../support/test-app';
import { rule, tokenApp, TokensApi } from '../support/token-factory';

/**
 * A list or search page is two statements: the page (the count of all matches in it), then its audit record,
 * which names the page's tokens (in its message and `token_ids`, in the page's order) and is written before the
 * page is answered, in the batched insert the reads arriving meanwhile share. An empty page is recorded as
 * "none"; only a page past the end needs one more statement, the count.
 */
describe('statements per list page', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: TokensApi;
  let mine: string[];
  beforeAll(async () => {
    // No scheduled jobs: the sealer's own statements would mix with the request's.
    ctx = await TestContext.create({ env: { JOBS_ENABLED: 'false' } });
    tenant = await ctx.newTenant();
    ({ api } = await tokenApp(ctx, tenant, [], ['token:create', 'token:read', 'token:search']));
    mine = [];
    for (const data of ['a', 'b', 'c']) {
      mine.push((await api.create({ type: 'token', data, metadata: { k: 'Mine' } }).expect(201)).body.id);
    }
    await api.create({ type: 'token', data: 'other', metadata: { k: 'other' } }).expect(201);
    // Warm: leases, keys and caches are taken by the first requests.
    await api.list('?metadata.k=mine').expect(200);
  });
  afterAll(() => ctx.close());

  /** The records of `operation` that `work` added, and the statements it sent. */
  async function recorded(
    operation: string,
    work: () => Promise<unknown>,
  ): Promise<{ sent: string[]; records: (LogEntry & { token_ids: string[] | null })[] }> {
    const before = new Set((await auditRows(ctx, tenant.tenantId)).map((r) => r.id));
    const sent = await statementsOf(work);
    const records = (await auditRows(ctx, tenant.tenantId)).filter(
      (r) => !before.has(r.id) && r.operation === operation,
    );
    return { sent, records: records as (LogEntry & { token_ids: string[] | null })[] };
  }

  it('a list by metadata is its page statement and the record of the page it answers with', async () => {
    let listed: string[] = [];
    const { sent, records } = await recorded('list', async () => {
      const res = await api.list('?metadata.k=mine&size=2').expect(200);
      listed = res.body.data.map((t: { id: string }) => t.id);
      expect(res.body.pagination.total_items).toBe(3);
    });
    expect(listed).toEqual([mine[2], mine[1]]);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/FROM tokens t WHERE/);
    expect(sent[1]).toMatch(/INSERT INTO audit_records/);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      entity_type: 'token',
      entity_id: null,
      outcome: 'success',
      message: `Tokens listed: ${listed.join(', ')}`,
      token_ids: listed,
    });
    expect(records[0].request_id).not.toBeNull();
  });

  it('a list without a filter and a search are two statements each, their records naming their pages', async () => {
    const all = await recorded('list', () => api.list().expect(200));
    expect(all.sent).toHaveLength(2);
    expect(all.records.map((r) => r.token_ids?.length)).toEqual([4]);

    const found = await recorded('search', () => api.search({ query: 'metadata.k:mine' }).expect(200));
    expect(found.sent).toHaveLength(2);
    expect(found.records.map((r) => [r.message, r.token_ids])).toEqual([
      [`Tokens found: ${[...mine].reverse().join(', ')}`, [...mine].reverse()],
    ]);
  });

  it('an empty page is recorded as none; a page past the end also counts the matches', async () => {
    const empty = await recorded('list', () => api.list('?metadata.k=nobody').expect(200));
    expect(empty.sent).toHaveLength(2);
    expect(empty.records.map((r) => [r.message, r.token_ids])).toEqual([['Tokens listed: none', null]]);

    let total = 0;
    const past = await recorded('list', async () => {
      total = (await api.list('?metadata.k=mine&page=3&size=2').expect(200)).body.pagination.total_items;
    });
    expect(total).toBe(3);
    expect(past.sent).toHaveLength(3);
    expect(past.records.map((r) => r.message)).toEqual(['Tokens listed: none']);
  });

  it('lists a token as a get shows it, containers and dates included', async () => {
    const created = await api
      .create({
        type: 'token',
        data: { a: 1 },
        containers: ['/b/', '/a/c_d-e/'],
        metadata: { k: 'shown' },
        expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      })
      .expect(201);
    const listed = await api.list('?metadata.k=shown').expect(200);
    expect(listed.body.data).toEqual([(await api.get(created.body.id).expect(200)).body]);
    expect(listed.body.data[0].containers).toEqual(['/b/', '/a/c_d-e/']);
  });

  it('a caller whose rules reach no container is recorded without reading a token', async () => {
    const { api: none } = await tokenApp(ctx, tenant, [rule('/elsewhere/', 'reveal', ['token:create'])]);
    const { sent, records } = await recorded('list', () => none.list().expect(200));
    expect(sent.some((text) => /FROM tokens/.test(text))).toBe(false);
    expect(records.map((r) => r.message)).toEqual(['Tokens listed: none']);
  });
});
