import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Claimed, DurableQueue, QueuePolicy, QueueTable } from '../../src/database/durable-queue';
import { postgresUrl } from '../support/databases';
import { ScratchDatabase, scratchDatabase } from '../support/scratch-database';
import { TestClock } from '../support/test-clock';

const onPostgres = postgresUrl() !== null ? it : it.skip;

interface Item extends Claimed {
  tenant_id: string;
  id: string;
  payload: string;
}

interface Row {
  status: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date;
  done_at: Date | null;
  leased_until: Date | null;
  secret: Buffer | null;
}

const TABLE: QueueTable = {
  name: 'queue-test',
  table: 'queue_test_items',
  key: ['tenant_id', 'id'],
  returning: ['payload'],
  doneAt: 'done_at',
  leasedUntil: 'leased_until',
  clearedWhenDone: ['secret'],
};
const POLICY: QueuePolicy = { maxAttempts: 3, backoff: { initialMs: 1_000, maxMs: 3_000 }, leaseMs: 60_000 };
const START = new Date('2026-01-01T00:00:00.000Z');
const TENANT_A = '00000000-0000-4000-8000-00000000000a';
const TENANT_B = '00000000-0000-4000-8000-00000000000b';

/** DurableQueue on its own, over a table of its own, on the test run's database (no application boot). */
describe('DurableQueue', () => {
  let db: ScratchDatabase;
  let dataSource: DataSource;
  let clock: TestClock;
  let queue: DurableQueue<Item>;

  beforeAll(async () => {
    db = await scratchDatabase(
      'queue_test_items',
      `attempts int NOT NULL DEFAULT 0,
       last_error text,
       last_attempt_at timestamptz,
       next_attempt_at timestamptz NOT NULL,
       done_at timestamptz,
       leased_until timestamptz,
       secret bytea`,
    );
    dataSource = db.dataSource;
  });
  afterAll(() => db.close());
  beforeEach(async () => {
    await db.empty();
    clock = new TestClock();
    clock.set(START);
    queue = new DurableQueue<Item>(db.dataLayer, clock, TABLE, POLICY);
  });

  async function add(payload: string, dueInMs = 0, tenantId = TENANT_A): Promise<string> {
    const id = randomUUID();
    await dataSource.query(
      `INSERT INTO queue_test_items (tenant_id, id, payload, next_attempt_at, secret)
       VALUES ($1, $2, $3, $4, '\\x01'::bytea)`,
      [tenantId, id, payload, new Date(START.getTime() + dueInMs)],
    );
    return id;
  }

  async function row(id: string): Promise<Row> {
    const rows = await dataSource.query<Row[]>(
      `SELECT status, attempts, last_error, next_attempt_at, done_at, leased_until, secret
         FROM queue_test_items WHERE id = $1`,
      [id],
    );
    return rows[0];
  }

  /** Sorted: the rows an UPDATE … RETURNING answers come in no promised order. */
  function payloads(items: Item[]): string[] {
    return items.map((item) => item.payload).sort();
  }

  it('claims due pending items oldest first, up to the limit, returning the asked columns and attempts', async () => {
    await add('third', -1_000);
    await add('first', -3_000);
    await add('not due', 5_000);
    await add('second', -2_000);
    const done = await add('done', -4_000);
    await dataSource.query(`UPDATE queue_test_items SET status = 'sent' WHERE id = $1`, [done]);

    const claimed = await queue.claim(2);
    expect(payloads(claimed)).toEqual(['first', 'second']);
    expect(claimed.find((item) => item.payload === 'first')).toEqual(
      expect.objectContaining({ tenant_id: TENANT_A, id: expect.any(String), payload: 'first', attempts: 1 }),
    );
    expect(payloads(await queue.claim(10))).toEqual(['third']);
    expect(await queue.claim(10)).toEqual([]);
  });

  it('claims only the named item when given one, and only when it is due', async () => {
    await add('other', -1_000);
    const wanted = await add('wanted', -500);
    const later = await add('later', 5_000);
    expect(payloads(await queue.claim(10, wanted))).toEqual(['wanted']);
    expect(await queue.claim(10, later)).toEqual([]);
  });

  it('never gives the same item to two claimers at once', async () => {
    for (let i = 0; i < 30; i++) {
      await add(`item ${i}`, -30_000 + i);
    }
    const rounds = await Promise.all([1, 2, 3, 4, 5, 6].map(() => queue.claim(7)));
    const ids = rounds.flat().map((item) => item.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(30);
    expect(rounds.flat().every((item) => item.attempts === 1)).toBe(true);
  });

  onPostgres('skips an item another transaction holds locked instead of waiting for it', async () => {
    const held = await add('held', -3_000);
    await add('free 1', -2_000);
    await add('free 2', -1_000);
    await db.whileLocked(held, async () => {
      expect(payloads(await queue.claim(1))).toEqual(['free 1']);
      expect(payloads(await queue.claimFair(10, 10))).toEqual(['free 2']);
    });
    expect(payloads(await queue.claim(10))).toEqual(['held']);
  });

  it('leases a claimed item: out of reach until the lease lapses, then claimable again as a new attempt', async () => {
    const id = await add('leased');
    await queue.claim(1);
    const leased = await row(id);
    expect(leased.status).toBe('pending');
    expect(leased.attempts).toBe(1);
    expect(leased.leased_until?.getTime()).toBe(START.getTime() + POLICY.leaseMs);

    clock.advance(POLICY.leaseMs - 1);
    expect(await queue.claim(10)).toEqual([]);
    clock.advance(1);
    const again = await queue.claim(10);
    expect(payloads(again)).toEqual(['leased']);
    expect(again[0].attempts).toBe(2);
  });

  it('leases by pushing next_attempt_at out when the table has no lease column', async () => {
    const plain = new DurableQueue<Item>(db.dataLayer, clock, { ...TABLE, leasedUntil: null }, POLICY);
    const id = await add('plain');
    await plain.claim(1);
    const leased = await row(id);
    expect(leased.leased_until).toBeNull();
    expect(leased.next_attempt_at.getTime()).toBe(START.getTime() + POLICY.leaseMs);
    clock.advance(POLICY.leaseMs - 1);
    expect(await plain.claim(10)).toEqual([]);
    clock.advance(1);
    expect((await plain.claim(10))[0].attempts).toBe(2);
    await expect(plain.claimFair(10, 1)).rejects.toThrow(/lease column/);
  });

  it('retries a failed attempt after the capped exponential backoff, keeping the cause', async () => {
    const id = await add('flaky');
    for (const step of [1_000, 2_000]) {
      const [item] = await queue.claim(1);
      const failedAt = clock.now().getTime();
      expect(await queue.attemptFailed(item, `cause ${item.attempts}`)).toBe('retry');
      const after = await row(id);
      expect(after.status).toBe('pending');
      expect(after.last_error).toBe(`cause ${item.attempts}`);
      expect(after.leased_until).toBeNull();
      expect(after.secret).not.toBeNull();
      const wait = after.next_attempt_at.getTime() - failedAt;
      expect(wait).toBeGreaterThanOrEqual(step / 2);
      expect(wait).toBeLessThanOrEqual(step);

      clock.set(after.next_attempt_at.getTime() - 1);
      expect(await queue.claim(1)).toEqual([]);
      clock.advance(1);
    }
    const [third] = await queue.claim(1);
    expect(third.attempts).toBe(3);
  });

  it('caps the backoff at maxMs', async () => {
    const capped = new DurableQueue<Item>(db.dataLayer, clock, TABLE, { ...POLICY, maxAttempts: 10 });
    const id = await add('capped');
    for (let attempt = 1; attempt <= 5; attempt++) {
      const [item] = await capped.claim(1);
      const failedAt = clock.now().getTime();
      await capped.attemptFailed(item, 'down');
      const next = (await row(id)).next_attempt_at.getTime();
      expect(next - failedAt).toBeLessThanOrEqual(POLICY.backoff.maxMs);
      if (attempt >= 3) {
        expect(next - failedAt).toBeGreaterThanOrEqual(POLICY.backoff.maxMs / 2);
      }
      clock.set(next);
    }
  });

  it('gives an item up at the attempt limit: failed, its secret cleared, never claimed again', async () => {
    const id = await add('doomed');
    for (let attempt = 1; attempt < POLICY.maxAttempts; attempt++) {
      const [item] = await queue.claim(1);
      expect(await queue.attemptFailed(item, 'refused')).toBe('retry');
      clock.set((await row(id)).next_attempt_at);
    }
    const [last] = await queue.claim(1);
    expect(last.attempts).toBe(POLICY.maxAttempts);
    expect(await queue.attemptFailed(last, 'refused for good')).toBe('failed');
    const dead = await row(id);
    expect(dead).toEqual(
      expect.objectContaining({
        status: 'failed',
        last_error: 'refused for good',
        secret: null,
        done_at: null,
      }),
    );
    expect(dead.leased_until).toBeNull();
    clock.advance(24 * 60 * 60 * 1000);
    expect(await queue.claim(10)).toEqual([]);
  });

  it('tells an item claimed past its last attempt (its worker died during it) as exhausted', async () => {
    await add('crashy');
    for (let attempt = 1; attempt <= POLICY.maxAttempts + 1; attempt++) {
      const [item] = await queue.claim(1);
      expect(queue.exhausted(item)).toBe(attempt > POLICY.maxAttempts);
      clock.advance(POLICY.leaseMs);
    }
  });

  it('gives an item up at once, whatever its attempts', async () => {
    const id = await add('hopeless');
    const [item] = await queue.claim(1);
    await queue.giveUp(item, 'no such address');
    expect(await row(id)).toEqual(
      expect.objectContaining({ status: 'failed', attempts: 1, last_error: 'no such address', secret: null }),
    );
  });

  it('completes an item: its status, done time, lease and secret cleared, and out of the queue', async () => {
    const id = await add('fine');
    const [item] = await queue.claim(1);
    clock.advance(250);
    await queue.complete(item, 'sent');
    expect(await row(id)).toEqual(
      expect.objectContaining({
        status: 'sent',
        last_error: null,
        done_at: new Date(START.getTime() + 250),
        leased_until: null,
        secret: null,
      }),
    );
    clock.advance(POLICY.leaseMs * 10);
    expect(await queue.claim(10)).toEqual([]);
  });

  it('leaves an item alone once it left the queue (settling a claim that was given up meanwhile)', async () => {
    const id = await add('raced');
    const [item] = await queue.claim(1);
    await queue.giveUp(item, 'cancelled');
    await queue.complete(item, 'sent');
    await queue.attemptFailed(item, 'late');
    expect(await row(id)).toEqual(
      expect.objectContaining({ status: 'failed', last_error: 'cancelled', done_at: null }),
    );
  });

  it("gives up every matching queued item inside the caller's transaction, and only when it commits", async () => {
    const a1 = await add('a1');
    const a2 = await add('a2', 5_000);
    const sent = await add('sent');
    const b = await add('b', 0, TENANT_B);
    await dataSource.query(`UPDATE queue_test_items SET status = 'sent' WHERE id = $1`, [sent]);

    await expect(
      db.dataLayer.transaction(async () => {
        await queue.giveUpWhere({ tenant_id: TENANT_A }, 'webhook deleted');
        expect(
          (await db.dataLayer.query<Row>('SELECT status FROM queue_test_items WHERE id = $1', [a1]))[0]
            .status,
        ).toBe('failed');
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await row(a1)).status).toBe('pending');

    await db.dataLayer.transaction(() => queue.giveUpWhere({ tenant_id: TENANT_A }, 'webhook deleted'));
    for (const id of [a1, a2]) {
      expect(await row(id)).toEqual(
        expect.objectContaining({ status: 'failed', last_error: 'webhook deleted', secret: null }),
      );
    }
    expect((await row(sent)).status).toBe('sent');
    expect((await row(sent)).last_error).toBeNull();
    expect((await row(b)).status).toBe('pending');
    expect(payloads(await queue.claim(10))).toEqual(['b']);
  });

  it('claims fairly across tenants: every tenant once before any twice, within each tenant’s free share', async () => {
    for (let i = 0; i < 4; i++) {
      await add(`a${i}`, -10_000 + i, TENANT_A);
    }
    await add('b0', -1_000, TENANT_B);
    expect(payloads(await queue.claimFair(2, 3)).sort()).toEqual(['a0', 'b0']);
    // Tenant A holds one lease of its three: two more, oldest first.
    expect(payloads(await queue.claimFair(10, 3))).toEqual(['a1', 'a2']);
    expect(await queue.claimFair(10, 3)).toEqual([]);
    // The leases lapse: a3, never claimed, is the oldest due; b0 comes back beside A's three.
    clock.advance(POLICY.leaseMs);
    const lapsed = payloads(await queue.claimFair(10, 3));
    expect(lapsed).toHaveLength(4);
    expect(lapsed).toEqual(expect.arrayContaining(['a3', 'b0']));
    expect(lapsed.filter((p) => p.startsWith('a'))).toHaveLength(3);
  });
});
