import { Logger } from '@nestjs/common';
import { JobRunner } from '../../src/jobs/job-runner';
import { JobsRepository } from '../../src/jobs/jobs.repository';
import { MaintenanceService } from '../../src/jobs/maintenance.service';
import { WriteCounter } from '../../src/tokens/write-counter';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';

interface TableStats {
  relname: string;
  reltuples: number;
  last_analyze: Date | null;
  last_vacuum: Date | null;
}

describe('table maintenance', () => {
  let db: TestDataSource;
  let writes: WriteCounter;
  let maintenance: MaintenanceService;

  beforeAll(async () => {
    db = await openTestDataSource();
    writes = new WriteCounter();
    const statements = new JobsRepository(db.dataLayer);
    maintenance = new MaintenanceService(
      statements,
      db.database,
      writes,
      new JobRunner(statements, db.database),
    );
  });
  afterAll(() => db.close());
  afterEach(() => jest.restoreAllMocks());

  const stats = async (): Promise<Record<string, TableStats>> => {
    const rows: TableStats[] = await db.dataSource.query(
      `SELECT c.relname, c.reltuples, s.last_analyze, s.last_vacuum
       FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid
       WHERE c.relname IN ('tokens', 'token_search_indexes')`,
    );
    return Object.fromEntries(rows.map((r) => [r.relname, r]));
  };

  it('turns GIN fast update off for the metadata index', async () => {
    const rows: { reloptions: string[] | null }[] = await db.dataSource.query(
      `SELECT reloptions FROM pg_class WHERE relname = 'tokens_live_metadata'`,
    );
    expect(rows).toEqual([{ reloptions: ['fastupdate=off'] }]);
  });

  it('analyzes the token tables, and vacuums them on the embedded database only', async () => {
    const tenantId = await db.insertTenant();
    await db.dataSource.query(
      `INSERT INTO tokens (tenant_id, id, type, data, data_key_version, containers, created_at)
       SELECT $1, 'token-' || g, 'card', '\\x00'::bytea, 1, ARRAY['/pci/high/'], now()
       FROM generate_series(1, 3) g`,
      [tenantId],
    );
    await db.dataSource.query(
      `INSERT INTO token_search_indexes (tenant_id, hash, token_id)
       SELECT $1, 'hash-' || g, 'token-' || g FROM generate_series(1, 3) g`,
      [tenantId],
    );
    const before = await stats();
    // Never analyzed: PostgreSQL 14+ (and PGlite) report -1 tuples.
    expect(before.tokens.reltuples).toBe(-1);
    expect(before.tokens.last_analyze).toBeNull();

    await maintenance.analyze();

    const after = await stats();
    for (const table of ['tokens', 'token_search_indexes']) {
      expect(after[table].reltuples).toBe(3);
      expect(after[table].last_analyze).toBeInstanceOf(Date);
      if (db.database.embedded) {
        expect(after[table].last_vacuum).toBeInstanceOf(Date);
      } else {
        expect(after[table].last_vacuum).toBeNull();
      }
    }
  });

  it('runs early once enough rows were written since the last run', async () => {
    const run = jest.spyOn(maintenance, 'analyze');
    await maintenance.run();
    run.mockClear();
    writes.add(1);
    await maintenance.runIfBusy(3);
    expect(run).not.toHaveBeenCalled();
    writes.add(3);
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
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.spyOn(maintenance, 'analyze').mockRejectedValue(new Error('relation secret-4242 is broken'));
    await maintenance.run();
    expect(errors).toHaveBeenCalledWith({ job: 'maintenance', err: { type: 'Error' } }, 'maintenance failed');
    expect(JSON.stringify(errors.mock.calls)).not.toContain('secret-4242');
  });
});
