import type { VaultApp } from '../../src/app';
import { JobRunner } from '../../src/jobs/job-runner';
import { ScheduledJob } from '../../src/jobs/job-timers';
import { JobScheduler } from '../../src/jobs/jobs.module';
import { TestContext } from '../support/test-app';

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('JobRunner.runExclusive and the job table', () => {
  let ctx: TestContext;
  let replica: VaultApp | null = null;

  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => {
    await ctx.close();
  });

  it('runs one job of a name at a time in a process, and others alongside', async () => {
    const runner = ctx.get(JobRunner);
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
    const runner = ctx.get(JobRunner);
    expect(
      await runner.runExclusive('broken', () => Promise.reject(new Error('token secret-4242 leaked'))),
    ).toBe(true);
    const line = ctx.logs.find((l) => l.includes('broken failed'));
    expect(line).toBeDefined();
    expect(line).not.toContain('secret-4242');
    expect(await runner.runExclusive('broken', () => Promise.resolve())).toBe(true);
  });

  onPostgres('runs a job once across two instances on one database', async () => {
    replica = await ctx.secondInstance();
    const here = ctx.get(JobRunner);
    const there = replica.app.get(JobRunner);
    const held = gate();
    let runs = 0;
    const first = here.runExclusive('shared', async () => {
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
  });

  it("schedules only the replica's own jobs when JOBS_ENABLED=false, and the table when it is on", async () => {
    const here = (ctx2: TestContext): JobScheduler => ctx2.get(JobScheduler);
    const applies = (j: ScheduledJob): boolean => j.onlyIf !== false;
    const always = here(ctx)
      .jobs()
      .filter((j) => applies(j) && j.always === true);
    expect(here(ctx).scheduled).toBe(always.length);
    // The embedded database has no listener, and its rate limits count in memory.
    expect(always.length).toBe(ctx.database.embedded ? 0 : 3);
    const on = await TestContext.create({ env: { JOBS_ENABLED: 'true' } });
    try {
      const scheduler = here(on);
      expect(scheduler.scheduled).toBe(scheduler.jobs().filter(applies).length);
      expect(scheduler.jobs().map((j) => j.name)).toEqual(
        expect.arrayContaining([
          'purge',
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
    expect(here(ctx).scheduled).toBe(always.length);
  });
});
