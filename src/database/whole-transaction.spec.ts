import type { DataSource, QueryRunner } from 'typeorm';
import { commitWith, runWhole, whenCommitted } from './whole-transaction';

/**
 * A query runner that only records what it is sent, in order with the callbacks' marks. Its connection
 * records the statements sent to it directly, marked `(pipelined)` when sent in pg's pipeline mode, and
 * answers each with `rows`, or fails the ones whose text is `failing`.
 */
function recordingDataSource(log: string[], failing?: string): DataSource {
  const client = {
    pipeline: false,
    query: (config: string | { text: string }) => {
      const text = typeof config === 'string' ? config : config.text;
      log.push(client.pipeline ? `${text} (pipelined)` : text);
      return text === failing
        ? Promise.reject(new Error(`${text} failed`))
        : Promise.resolve({ rows: [{ answer: text }] });
    },
  };
  const runner = {
    isReleased: false,
    isTransactionActive: false,
    manager: {},
    connect: () => Promise.resolve(client),
    startTransaction: () => {
      log.push('BEGIN');
      runner.isTransactionActive = true;
      return Promise.resolve();
    },
    query: (statement: string) => {
      log.push(statement);
      return Promise.resolve([]);
    },
    release: () => {
      runner.isReleased = true;
      return Promise.resolve();
    },
  };
  return { createQueryRunner: () => runner as unknown as QueryRunner } as unknown as DataSource;
}

describe('whenCommitted', () => {
  it('runs at once outside a whole transaction', () => {
    const log: string[] = [];
    whenCommitted(() => log.push('woken'));
    expect(log).toEqual(['woken']);
  });

  it('runs after the COMMIT of the whole transaction it was called in, in order', async () => {
    const log: string[] = [];
    await runWhole(recordingDataSource(log), async () => {
      whenCommitted(() => log.push('first'));
      await Promise.resolve();
      whenCommitted(() => log.push('second'));
      log.push('work done');
    });
    expect(log).toEqual(['BEGIN', 'work done', 'COMMIT', 'first', 'second']);
  });

  it('never runs after a ROLLBACK', async () => {
    const log: string[] = [];
    await expect(
      runWhole(recordingDataSource(log), () => {
        whenCommitted(() => log.push('woken'));
        return Promise.reject(new Error('refused'));
      }),
    ).rejects.toThrow('refused');
    expect(log).toEqual(['BEGIN', 'ROLLBACK']);
  });
});

describe('runWhole with an opening statement and commitWith', () => {
  it('sends the opening statement with the BEGIN and the commitWith statements with the COMMIT', async () => {
    const log: string[] = [];
    const opened = await runWhole(
      recordingDataSource(log),
      (manager, rows) => {
        log.push('work');
        commitWith({ name: 'answer', text: 'UPDATE answer', values: [] });
        whenCommitted(() => log.push('woken'));
        return Promise.resolve(rows);
      },
      { name: 'claim', text: 'INSERT claim', values: [] },
    );
    expect(opened).toEqual([{ answer: 'INSERT claim' }]);
    expect(log).toEqual([
      'START TRANSACTION (pipelined)',
      'INSERT claim (pipelined)',
      'work',
      'UPDATE answer (pipelined)',
      'COMMIT (pipelined)',
      'woken',
    ]);
  });

  it('rejects with the error of a failed commitWith statement, and never counts the work as committed', async () => {
    const log: string[] = [];
    await expect(
      runWhole(recordingDataSource(log, 'UPDATE answer'), () => {
        commitWith({ text: 'UPDATE answer', values: [] });
        whenCommitted(() => log.push('woken'));
        return Promise.resolve();
      }),
    ).rejects.toThrow('UPDATE answer failed');
    // The COMMIT behind it answers ROLLBACK: no ROLLBACK of its own follows.
    expect(log).toEqual(['BEGIN', 'UPDATE answer (pipelined)', 'COMMIT (pipelined)']);
  });

  it('refuses commitWith outside a whole transaction', () => {
    expect(() => commitWith({ text: 'UPDATE answer' })).toThrow('open whole transaction');
  });
});
