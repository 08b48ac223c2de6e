import type { DataSource, QueryRunner } from 'typeorm';
import { runWhole, whenCommitted } from './whole-transaction';

/** A query runner that only records what it is sent, in order with the callbacks' marks. */
function recordingDataSource(log: string[]): DataSource {
  const runner = {
    isReleased: false,
    isTransactionActive: false,
    manager: {},
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
