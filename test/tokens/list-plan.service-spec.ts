import { entityColumns } from '../../src/database/entity-columns';
import { TokenListFilter, tokenListPageSql } from '../../src/tokens/token-list.statements';
import { Token } from '../../src/tokens/token.entity';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
function nodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodes)];
}

const TOKENS = 2000;
const VALUES = 100;

/**
 * How a list filtered by metadata finds its tokens. The planner once walked the tenant's tokens in creation
 * order, trusting the page's LIMIT to end the walk early, and read every token when the filter matched few
 * (a value missing from the statistics is estimated at 0.5 % of the table). Here sorting is made expensive for
 * the planner (enable_sort off), which makes that walk its choice wherever the statement allows it.
 */
describe('token list statement', () => {
  let db: TestDataSource;
  let tenantId: string;
  const columns = (): string => entityColumns(db.dataSource.getMetadata(Token), 't');

  beforeAll(async () => {
    db = await openTestDataSource();
    tenantId = await db.insertTenant();
    await db.dataSource.query(
      `INSERT INTO tokens (tenant_id, id, type, containers, metadata, metadata_ci, created_at)
       SELECT $1, 'plan-' || n, 'token', '{/general/}', jsonb_build_object('k', 'V' || n % $3),
         jsonb_build_object('k', 'v' || n % $3), now() - make_interval(secs => $2 - n)
       FROM generate_series(1, $2) AS n`,
      [tenantId, TOKENS, VALUES],
    );
    await db.dataSource.query('ANALYZE tokens');
  });
  afterAll(() => db.close());

  const filter = (metadata: Record<string, string>, offset = 0): TokenListFilter => ({
    metadata,
    scope: ['/general/'],
    offset,
    limit: 20,
  });

  /** The plan's nodes and the rows of the page statement, planned and run with sorting discouraged. */
  async function run(list: TokenListFilter): Promise<{ plan: PlanNode[]; ids: string[]; total: number }> {
    const page = tokenListPageSql(tenantId, list, new Date(), columns());
    return db.dataSource.transaction(async (manager) => {
      await manager.query('SET LOCAL enable_sort = off');
      const [{ 'QUERY PLAN': explained }] = await manager.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>(
        `EXPLAIN (FORMAT JSON) ${page.text}`,
        page.values,
      );
      const rows = await manager.query<{ id: string; totalItems: string }[]>(page.text, page.values);
      return {
        plan: nodes(explained[0].Plan),
        ids: rows.map((r) => r.id),
        total: rows.length === 0 ? 0 : Number(rows[0].totalItems),
      };
    });
  }

  const indexes = (plan: PlanNode[]): string[] =>
    plan.flatMap((n) => (n['Index Name'] === undefined ? [] : [n['Index Name']]));

  it('finds a metadata filter’s matches by its GIN index, not by walking every token in creation order', async () => {
    const { plan, ids, total } = await run(filter({ k: 'v7' }));
    expect(indexes(plan)).toContain('tokens_live_metadata');
    expect(indexes(plan)).not.toContain('tokens_live_by_created');
    // The page's rows are read by the address of the version found, not by a primary-key lookup each.
    expect(plan.map((n) => n['Node Type'])).toContain('Tid Scan');
    expect(indexes(plan)).not.toContain('tokens_pkey');
    expect(total).toBe(TOKENS / VALUES);
    // n = 7, 107, ... 1907: newest first is the largest n first
    const expected = Array.from({ length: TOKENS / VALUES }, (_, i) => `plan-${1907 - i * VALUES}`);
    expect(ids).toEqual(expected);
  });

  it('pages through the matches newest first, the count on every page', async () => {
    const first = await run({ ...filter({ k: 'v7' }), limit: 8 });
    const second = await run({ ...filter({ k: 'v7' }, 8), limit: 8 });
    const third = await run({ ...filter({ k: 'v7' }, 16), limit: 8 });
    const all = (await run(filter({ k: 'v7' }))).ids;
    expect([...first.ids, ...second.ids, ...third.ids]).toEqual(all);
    expect([first.total, second.total, third.total]).toEqual([20, 20, 20]);
    expect(third.ids).toHaveLength(4);
  });

  it('walks the tenant’s tokens in creation order when nothing but the scope filters them', async () => {
    const { plan, ids, total } = await run(filter({}));
    expect(indexes(plan)).toContain('tokens_live_by_created');
    expect(total).toBe(TOKENS);
    expect(ids).toEqual(Array.from({ length: 20 }, (_, i) => `plan-${TOKENS - i}`));
  });
});
