import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Database } from '../../src/database/database.service';
import { Transactions } from '../../src/database/transactions';
import { SCHEMA } from '../../src/entities';
import { JobRunner } from '../../src/jobs/job-runner';
import { ScheduledJob } from '../../src/jobs/job-timers';
import { JobScheduler } from '../../src/jobs/jobs.module';
import { JobsRepository } from '../../src/jobs/jobs.repository';
import { TestContext } from '../support/test-app';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('JobRunner.runExclusive', () => {
  let db: TestDataSource;
  let runner: JobRunner;

  beforeAll(async () => {
    db = await openTestDataSource();
    runner = new JobRunner(new JobsRepository(db.dataLayer), db.database);
  });
  afterAll(() => db.close());
  afterEach(() => jest.restoreAllMocks());

  it('runs one job of a name at a time in a process, and others alongside', async () => {
    const held = gate();
    let runs = 0;
    const first = runner.runExclusive('demo', async () => {
      runs++;
      await held.promise;
    });
    expect(await runner.runExclusive('demo', () => Promise.resolve(void runs++))).toBe(false);
    expect(await runner.runExclusive('other', () => Promise.resolve())).toBe(true);
    held.open();
    expect(await first).toBe(true);
    expect(runs).toBe(1);
    expect(await runner.runExclusive('demo', () => Promise.resolve(void runs++))).toBe(true);
    expect(runs).toBe(2);
  });

  it('logs a failing job by name and type, never its message, and frees the name', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    expect(
      await runner.runExclusive('broken', () => Promise.reject(new Error('token secret-4242 leaked'))),
    ).toBe(true);
    expect(errors).toHaveBeenCalledWith({ job: 'broken', err: { type: 'Error' } }, 'broken failed');
    expect(JSON.stringify(errors.mock.calls)).not.toContain('secret-4242');
    expect(await runner.runExclusive('broken', () => Promise.resolve())).toBe(true);
  });

  onPostgres('runs a job once across two instances on one database', async () => {
    // A second replica: its own pool on the same database.
    const other = new DataSource({ ...db.database.options, ...SCHEMA });
    await other.initialize();
    try {
      const layer = new Database(other, new Transactions(other), { databasePreparedStatements: true });
      const there = new JobRunner(new JobsRepository(layer), db.database);
      const held = gate();
      let runs = 0;
      const first = runner.runExclusive('shared', async () => {
        runs++;
        await held.promise;
      });
      // Give the first run time to take the database lock.
      await new Promise((r) => setTimeout(r, 100));
      expect(await there.runExclusive('shared', () => Promise.resolve(void runs++))).toBe(false);
      held.open();
      await first;
      expect(await there.runExclusive('shared', () => Promise.resolve(void runs++))).toBe(true);
      expect(runs).toBe(2);
    } finally {
      await other.destroy();
    }
  });
});

describe('the job table', () => {
  it("schedules only the replica's own jobs when JOBS_ENABLED=false, and the table when it is on", async () => {
    const applies = (j: ScheduledJob): boolean => j.onlyIf !== false;
    const off = await TestContext.create();
    let always: ScheduledJob[];
    try {
      always = off
        .get(JobScheduler)
        .jobs()
        .filter((j) => applies(j) && j.always === true);
      expect(off.get(JobScheduler).scheduled).toBe(always.length);
      // The embedded database has no listener, and its rate limits count in memory.
      expect(always.length).toBe(off.database.embedded ? 0 : 3);
    } finally {
      await off.close();
    }
    const on = await TestContext.create({ env: { JOBS_ENABLED: 'true' } });
    const scheduler = on.get(JobScheduler);
    try {
      expect(scheduler.scheduled).toBe(scheduler.jobs().filter(applies).length);
      expect(scheduler.jobs().map((j) => j.name)).toEqual(
        expect.arrayContaining([
          'purge',
          'session-purge',
          'maintenance',
          'maintenance-on-writes',
          'webhook-deliveries',
          'invitation-mail',
          'rate-limit-lease-sweep',
          'rate-limit-purge',
          'change-feed-probe',
        ]),
      );
    } finally {
      await on.close();
    }
    // Stopped with the app.
    expect(scheduler.scheduled).toBe(0);
  });
});
