import { MaintenanceService } from '../../src/jobs/maintenance.service';
import { TestContext } from '../support/test-app';
import { cardData, tokenApp } from '../support/token-factory';

interface TableStats {
  relname: string;
  reltuples: number;
  last_analyze: Date | null;
  last_vacuum: Date | null;
}

describe('table maintenance', () => {
  let ctx: TestContext;
  let maintenance: MaintenanceService;

  beforeAll(async () => {
    ctx = await TestContext.create();
    maintenance = ctx.get(MaintenanceService);
  });
  afterAll(() => ctx.close());
  afterEach(() => jest.restoreAllMocks());

  const stats = async (): Promise<Record<string, TableStats>> => {
    const rows: TableStats[] = await ctx.dataSource.query(
      `SELECT c.relname, c.reltuples, s.last_analyze, s.last_vacuum
       FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid
       WHERE c.relname IN ('tokens', 'token_search_indexes')`,
    );
    return Object.fromEntries(rows.map((r) => [r.relname, r]));
  };

  it('turns GIN fast update off for the metadata index', async () => {
    const rows: { reloptions: string[] | null }[] = await ctx.dataSource.query(
      `SELECT reloptions FROM pg_class WHERE relname = 'tokens_live_metadata'`,
    );
    expect(rows).toEqual([{ reloptions: ['fastupdate=off'] }]);
  });

  it('analyzes the token tables, and vacuums them on the embedded database only', async () => {
    const tenant = await ctx.newTenant();
    const { api } = await tokenApp(ctx, tenant);
    for (let i = 0; i < 3; i++) {
      await api
        .create({
          type: 'card',
          data: cardData(),
          metadata: { n: String(i) },
          search_indexes: ['{{ data.number }}'],
        })
        .expect(201);
    }
    const before = await stats();
    // Never analyzed: PostgreSQL 14+ (and PGlite) report -1 tuples.
    expect(before.tokens.reltuples).toBe(-1);
    expect(before.tokens.last_analyze).toBeNull();

    await maintenance.analyze();

    const after = await stats();
    for (const table of ['tokens', 'token_search_indexes']) {
      expect(after[table].reltuples).toBe(3);
      expect(after[table].last_analyze).toBeInstanceOf(Date);
      if (ctx.database.embedded) {
        expect(after[table].last_vacuum).toBeInstanceOf(Date);
      } else {
        expect(after[table].last_vacuum).toBeNull();
      }
    }
  });

  it('runs early once enough rows were written since the last run', async () => {
    const run = jest.spyOn(maintenance, 'analyze');
    const tenant = await ctx.newTenant('Bulk');
    const { api } = await tokenApp(ctx, tenant);
    await maintenance.run();
    run.mockClear();
    await api.create({ type: 'token', data: 'one' }).expect(201);
    await maintenance.runIfBusy(3);
    expect(run).not.toHaveBeenCalled();
    await api.tokenize(['a', 'b', 'c']).expect(200);
    await maintenance.runIfBusy(3);
    expect(run).toHaveBeenCalledTimes(1);
    // The run consumed the count: nothing new, no second run.
    await maintenance.runIfBusy(3);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('does not start a run while one is in progress', async () => {
    let finish: () => void = () => undefined;
    const analyze = jest
      .spyOn(maintenance, 'analyze')
      .mockReturnValue(new Promise<void>((resolve) => (finish = resolve)));
    const first = maintenance.run();
    // On PostgreSQL the run first takes the replicas' lock: wait until it is under way.
    while (analyze.mock.calls.length === 0) {
      await new Promise((r) => setTimeout(r, 5));
    }
    await maintenance.run();
    expect(analyze).toHaveBeenCalledTimes(1);
    finish();
    await first;
    await maintenance.run();
    expect(analyze).toHaveBeenCalledTimes(2);
  });

  it('logs a failed run without its message', async () => {
    jest.spyOn(maintenance, 'analyze').mockRejectedValue(new Error('relation secret-4242 is broken'));
    await maintenance.run();
    const line = ctx.logs.find((l) => l.includes('maintenance failed'));
    expect(line).toBeDefined();
    expect(line).not.toContain('secret-4242');
  });
});
