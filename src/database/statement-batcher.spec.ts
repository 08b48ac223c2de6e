import { StatementBatcher } from './statement-batcher';

/** A batcher whose statements are answered by hand, recording each batch it was sent. */
function manual(partition: (item: string) => string = () => 't'): {
  batcher: StatementBatcher<string, string>;
  batches: string[][];
  answer: () => void;
  fail: (err: Error) => void;
} {
  const batches: string[][] = [];
  const pending: { resolve: (out: string[]) => void; reject: (err: Error) => void; items: string[] }[] = [];
  const batcher = new StatementBatcher<string, string>(
    (items) =>
      new Promise((resolve, reject) => {
        batches.push(items);
        pending.push({ resolve, reject, items });
      }),
    (item) => item.split(':')[0],
    3,
    partition,
  );
  return {
    batcher,
    batches,
    answer: () => {
      const next = pending.shift();
      next?.resolve(next.items.map((i) => `done ${i}`));
    },
    fail: (err) => pending.shift()?.reject(err),
  };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('StatementBatcher', () => {
  it('sends a lone row at once, and rows that arrive meanwhile together in the next statement', async () => {
    const { batcher, batches, answer } = manual();
    const first = batcher.submit('a');
    await settle();
    const rest = ['b', 'c'].map((i) => batcher.submit(i));
    await settle();
    expect(batches).toEqual([['a']]);
    answer();
    await expect(first).resolves.toBe('done a');
    await settle();
    expect(batches).toEqual([['a'], ['b', 'c']]);
    answer();
    await expect(Promise.all(rest)).resolves.toEqual(['done b', 'done c']);
  });

  it('sends the rows of one submitAll in one statement, after the one in flight', async () => {
    const { batcher, batches, answer } = manual();
    const lone = batcher.submit('a');
    await settle();
    const both = batcher.submitAll(['b', 'c']);
    await settle();
    expect(batches).toEqual([['a']]);
    answer();
    await lone;
    await settle();
    expect(batches).toEqual([['a'], ['b', 'c']]);
    answer();
    await expect(both).resolves.toEqual(['done b', 'done c']);
    // With nothing in flight, they go at once, still together.
    const more = batcher.submitAll(['d', 'e']);
    await settle();
    expect(batches[2]).toEqual(['d', 'e']);
    answer();
    await expect(more).resolves.toEqual(['done d', 'done e']);
  });

  it('sends rows submitted while the same code runs together, also when none is in flight', async () => {
    const { batcher, batches, answer } = manual();
    // As requests answered by one statement go on: each reaches its next statement a few awaits later.
    const chained = ['a', 'b', 'c'].map(async (i) => {
      await Promise.resolve();
      await Promise.resolve();
      return batcher.submit(i);
    });
    await settle();
    expect(batches).toEqual([['a', 'b', 'c']]);
    answer();
    await expect(Promise.all(chained)).resolves.toEqual(['done a', 'done b', 'done c']);
  });

  it('caps a statement at max rows and never puts two rows of one key in one statement', async () => {
    const { batcher, batches, answer } = manual();
    const all = ['x', 'k:1', 'k:2', 'm', 'n', 'o'].map((i) => batcher.submit(i));
    await settle();
    answer();
    await settle();
    answer();
    await settle();
    await Promise.all(all);
    expect(batches).toEqual([
      ['x', 'k:1', 'm'],
      ['k:2', 'n', 'o'],
    ]);
  });

  it('gives every row of a failed statement its error, and goes on with the next', async () => {
    const { batcher, answer, fail } = manual();
    const first = batcher.submit('a');
    await settle();
    const second = [batcher.submit('b'), batcher.submit('c')];
    await settle();
    answer();
    await settle();
    fail(new Error('connection lost'));
    await expect(first).resolves.toBe('done a');
    await expect(second[0]).rejects.toThrow('connection lost');
    await expect(second[1]).rejects.toThrow('connection lost');
    const later = batcher.submit('d');
    await settle();
    answer();
    await expect(later).resolves.toBe('done d');
  });

  it('never puts rows of two partitions (tenants) in one statement, and sends each partition on its own', async () => {
    const { batcher, batches, answer } = manual((item) => item.split('/')[0]);
    const lone = batcher.submit('t1/a');
    await settle();
    const rest = ['t2/b', 't1/c', 't2/d'].map((i) => batcher.submit(i));
    const mixed = batcher.submitAll(['t3/e', 't1/f']);
    await settle();
    // t1's first statement is in flight: t2 and t3 go at once, each in a statement of its own.
    expect(batches).toEqual([['t1/a'], ['t2/b', 't2/d'], ['t3/e']]);
    answer();
    answer();
    answer();
    await settle();
    expect(batches[3]).toEqual(['t1/c', 't1/f']);
    answer();
    await expect(lone).resolves.toBe('done t1/a');
    await expect(Promise.all(rest)).resolves.toEqual(['done t2/b', 'done t1/c', 'done t2/d']);
    await expect(mixed).resolves.toEqual(['done t3/e', 'done t1/f']);
    for (const batch of batches) {
      expect(new Set(batch.map((i) => i.split('/')[0])).size).toBe(1);
    }
  });
});
