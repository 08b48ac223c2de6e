import { Logger } from '@nestjs/common';
import { backoffDelay, causeOf, Poller, retryUntilDone, runDetached } from './supervisor';

class RecordingLogger extends Logger {
  readonly lines: string[] = [];
  override warn(message: string): void {
    this.lines.push(message);
  }
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('backoffDelay', () => {
  const options = { initialMs: 100, maxMs: 1000 };

  it('doubles from the initial delay up to the cap, with jitter in the upper half of each step', () => {
    expect([0, 1, 2, 3, 4, 10].map((n) => backoffDelay(n, options, () => 0))).toEqual([
      50, 100, 200, 400, 500, 500,
    ]);
    expect([0, 1, 2, 3, 4, 10].map((n) => backoffDelay(n, options, () => 1))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
  });

  it('stays finite for any attempt count', () => {
    expect(backoffDelay(10_000, options, () => 1)).toBe(1000);
  });
});

describe('causeOf', () => {
  it('names the error class and code, never the message', () => {
    const err = Object.assign(new Error('duplicate key value (4111111111111111)'), { code: '23505' });
    expect(causeOf(err)).toBe('Error 23505');
    expect(causeOf(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(
      'Error ECONNREFUSED',
    );
    expect(causeOf(new TypeError('card 4111111111111111'))).toBe('TypeError');
    expect(causeOf(Object.assign(new Error('x'), { code: 'value 4111 1111' }))).toBe('Error');
    expect(causeOf('4111111111111111')).toBe('string');
  });
});

describe('runDetached', () => {
  it('logs a rejection as one line and does not let it escape', async () => {
    const logger = new RecordingLogger();
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    try {
      runDetached(logger, 'purge', () =>
        Promise.reject(Object.assign(new Error('secret'), { code: 'ECONNREFUSED' })),
      );
      runDetached(logger, 'sync throw', () => {
        throw new RangeError('secret');
      });
      await flush();
      expect(logger.lines.sort()).toEqual([
        'purge failed: Error ECONNREFUSED',
        'sync throw failed: RangeError',
      ]);
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});

describe('retryUntilDone', () => {
  it('retries failures with backoff until an attempt succeeds', async () => {
    const logger = new RecordingLogger();
    let calls = 0;
    const handle = retryUntilDone(
      logger,
      'listen',
      () => {
        calls++;
        return calls < 3
          ? Promise.reject(Object.assign(new Error('down'), { code: 'ECONNREFUSED' }))
          : Promise.resolve();
      },
      { initialMs: 1, maxMs: 4 },
    );
    await handle.done;
    expect(calls).toBe(3);
    expect(logger.lines).toHaveLength(2);
    expect(logger.lines[0]).toMatch(/^listen failed: Error ECONNREFUSED; retrying in \d+ ms$/);
  });

  it('stops while waiting between attempts', async () => {
    const logger = new RecordingLogger();
    let calls = 0;
    const handle = retryUntilDone(
      logger,
      'listen',
      () => {
        calls++;
        return Promise.reject(new Error('down'));
      },
      { initialMs: 60_000, maxMs: 60_000 },
    );
    await flush();
    handle.stop();
    await handle.done;
    expect(calls).toBe(1);
  });
});

describe('Poller', () => {
  const until = async (done: () => boolean): Promise<void> => {
    for (let i = 0; i < 1000 && !done(); i++) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  };

  it('looks at once and again after each look, backing off after failures with one line each', async () => {
    const logger = new RecordingLogger();
    const outcomes = ['ok', 'fail', 'fail', 'ok', 'ok'];
    let looks = 0;
    let concurrent = 0;
    const poller = new Poller(
      logger,
      'outbox look',
      async () => {
        expect(++concurrent).toBe(1);
        await flush();
        concurrent--;
        if (outcomes[looks++] === 'fail') {
          throw Object.assign(new Error('down'), { code: '57P01' });
        }
      },
      1,
      { initialMs: 1, maxMs: 2 },
    );
    poller.start();
    await until(() => looks >= outcomes.length);
    await poller.stop(100);
    expect(looks).toBeGreaterThanOrEqual(outcomes.length);
    expect(logger.lines).toEqual(['outbox look failed: Error 57P01', 'outbox look failed: Error 57P01']);
  });

  it('stops: no look after stop, and the look under way is awaited at most the given time', async () => {
    let looks = 0;
    let release: () => void = () => undefined;
    const poller = new Poller(
      new RecordingLogger(),
      'outbox look',
      () => {
        looks++;
        return new Promise<void>((resolve) => (release = resolve));
      },
      1,
    );
    poller.start();
    await until(() => looks === 1);
    await poller.stop(5); // the look never ends by itself: stop returns anyway
    release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(looks).toBe(1);
  });
});
