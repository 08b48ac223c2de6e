import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ClaimedOnce, ClaimOnceQueue, ClaimOnceTable } from '../../src/database/claim-once-queue';
import { postgresUrl } from '../support/databases';
import { ScratchDatabase, scratchDatabase } from '../support/scratch-database';
import { TestClock } from '../support/test-clock';

const onPostgres = postgresUrl() !== null ? it : it.skip;

interface Run extends ClaimedOnce {
  payload: string;
}

interface Row {
  status: string;
  started_at: Date | null;
  finished_at: Date | null;
  request: Buffer | null;
  outcome: string | null;
}

const TABLE: ClaimOnceTable = {
  table: 'claim_once_test_runs',
  returning: ['payload'],
  claimedStatus: 'running',
  claimedAt: 'started_at',
  order: 'created_at',
  doneAt: 'finished_at',
  clearedWhenDone: ['request'],
};
const START = new Date('2026-01-01T00:00:00.000Z');
const TENANT_A = '00000000-0000-4000-8000-00000000000a';
const TENANT_B = '00000000-0000-4000-8000-00000000000b';
const ANY = { known: {}, others: 100 };

/** DurableQueue's claim-once mode on its own, over a table of its own (no application boot). */
describe('ClaimOnceQueue', () => {
  let db: ScratchDatabase;
  let dataSource: DataSource;
  const clock = new TestClock();
  let queue: ClaimOnceQueue<Run>;
  let created = 0;

  beforeAll(async () => {
    db = await scratchDatabase(
      'claim_once_test_runs',
      `request bytea,
       outcome text,
       created_at timestamptz NOT NULL,
       started_at timestamptz,
       finished_at timestamptz`,
    );
    dataSource = db.dataSource;
    queue = new ClaimOnceQueue<Run>(db.dataLayer, clock, TABLE);
  });
  afterAll(() => db.close());
  beforeEach(async () => {
    clock.set(START);
    await db.empty();
  });

  async function add(payload: string, tenantId = TENANT_A): Promise<string> {
    const id = randomUUID();
    created += 1;
    await dataSource.query(
      `INSERT INTO claim_once_test_runs (tenant_id, id, payload, request, created_at)
       VALUES ($1, $2, $3, '\\x01'::bytea, $4)`,
      [tenantId, id, payload, new Date(START.getTime() - 1_000_000 + created)],
    );
    return id;
  }

  async function row(id: string): Promise<Row> {
    const rows = await dataSource.query<Row[]>(
      'SELECT status, started_at, finished_at, request, outcome FROM claim_once_test_runs WHERE id = $1',
      [id],
    );
    return rows[0];
  }

  /** Sorted: the rows an UPDATE … RETURNING answers come in no promised order. */
  function payloads(runs: Run[]): string[] {
    return runs.map((run) => run.payload).sort();
  }

  it('claims in queue order, sets the claimed status and time, and never claims an item twice', async () => {
    const first = await add('first');
    await add('second');
    await add('third');
    const claimed = await queue.claimFair(2, ANY);
    expect(payloads(claimed)).toEqual(['first', 'second']);
    expect({ ...claimed.find((run) => run.id === first) }).toEqual({
      tenant_id: TENANT_A,
      id: first,
      payload: 'first',
    });
    expect(await row(first)).toEqual(expect.objectContaining({ status: 'running', started_at: START }));

    clock.advance(365 * 24 * 60 * 60 * 1000);
    expect(payloads(await queue.claimFair(10, ANY))).toEqual(['third']);
    expect(await queue.claimFair(10, ANY)).toEqual([]);
  });

  it('never gives the same item to two claimers at once', async () => {
    for (let i = 0; i < 20; i++) {
      await add(`run ${i}`, i % 2 === 0 ? TENANT_A : TENANT_B);
    }
    const rounds = await Promise.all([1, 2, 3, 4, 5].map(() => queue.claimFair(5, ANY)));
    const ids = rounds.flat().map((run) => run.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(20);
  });

  onPostgres('skips an item another transaction holds locked instead of waiting for it', async () => {
    const held = await add('held');
    await add('free');
    await db.whileLocked(held, async () => {
      expect(payloads(await queue.claimFair(10, ANY))).toEqual(['free']);
    });
    expect(payloads(await queue.claimFair(10, ANY))).toEqual(['held']);
  });

  it('serves the tenant holding the fewest claimed items first, within each tenant’s allowance', async () => {
    for (let i = 0; i < 4; i++) {
      await add(`a${i}`, TENANT_A);
    }
    await add('b0', TENANT_B);
    await add('b1', TENANT_B);
    // A holds a0 already: B's first run comes before A's second.
    expect(payloads(await queue.claimFair(1, ANY))).toEqual(['a0']);
    expect(payloads(await queue.claimFair(2, ANY))).toEqual(['a1', 'b0']);
    // B may take none, A one: its allowance is by tenant id, the others' by `others`.
    expect(payloads(await queue.claimFair(10, { known: { [TENANT_B]: 0 }, others: 1 }))).toEqual(['a2']);
    expect(payloads(await queue.claimFair(10, { known: { [TENANT_A]: 0 }, others: 5 }))).toEqual(['b1']);
  });

  it('hands an item back to the queue, unless it was settled meanwhile', async () => {
    const id = await add('refused');
    const [run] = await queue.claimFair(1, ANY);
    await queue.release(run);
    expect(await row(id)).toEqual(expect.objectContaining({ status: 'pending', started_at: null }));
    expect(await row(id)).toEqual(expect.objectContaining({ request: Buffer.from([1]) }));

    const [again] = await queue.claimFair(1, ANY);
    await queue.complete(again, 'failed');
    await queue.release(again);
    expect((await row(id)).status).toBe('failed');
  });

  it('completes a claimed item with its values, clearing what only a queued item needs, once', async () => {
    const id = await add('done');
    const [run] = await queue.claimFair(1, ANY);
    clock.advance(1_500);
    await queue.complete(run, 'completed', { outcome: 'sealed answer' });
    expect(await row(id)).toEqual({
      status: 'completed',
      started_at: START,
      finished_at: new Date(START.getTime() + 1_500),
      request: null,
      outcome: 'sealed answer',
    });
    await queue.complete(run, 'failed', { outcome: 'late' });
    expect(await row(id)).toEqual(expect.objectContaining({ status: 'completed', outcome: 'sealed answer' }));

    const pending = await add('never claimed');
    await queue.complete({ tenant_id: TENANT_A, id: pending }, 'failed');
    expect((await row(pending)).status).toBe('pending');
  });

  it('finds items still claimed since a given time (their worker may have died), never pending or settled ones', async () => {
    const old = await add('old');
    const recent = await add('recent');
    const settled = await add('settled');
    await add('queued');
    const [oldRun] = await queue.claimFair(1, ANY);
    expect(oldRun.id).toBe(old);
    clock.advance(10_000);
    await queue.claimFair(2, ANY);
    await queue.complete({ tenant_id: TENANT_A, id: settled }, 'completed');

    const before = new Date(START.getTime() + 5_000);
    expect((await queue.claimedBefore(before, 10)).map((run) => run.id)).toEqual([old]);
    const later = (await queue.claimedBefore(clock.now(), 10)).map((run) => run.id).sort();
    expect(later).toEqual([old, recent].sort());
    expect(await queue.claimedBefore(clock.now(), 1)).toHaveLength(1);
  });
});
