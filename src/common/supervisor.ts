import { Logger } from '@nestjs/common';

/**
 * Work that runs outside a request (change listeners, scheduled jobs, mail and webhook senders) goes
 * through here, never through a bare `void promise`: a failure such as a database outage is logged as one
 * line naming the task and the cause, and retried later, instead of ending the process as an unhandled
 * rejection.
 */

export interface BackoffOptions {
  /** Delay before the first retry. */
  initialMs: number;
  /** The cap the doubling stops at. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 30_000 };

/**
 * The wait before retry number `attempt` (0-based): capped exponential with "equal jitter", so replicas
 * that lost the database together do not reconnect in lockstep, yet never retry sooner than half the step.
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const step = Math.min(options.maxMs, options.initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(step / 2 + random() * (step / 2));
}

/**
 * What went wrong, safe to log: an error code (ECONNREFUSED, a SQLSTATE such as 57P01) or the error's
 * class, never its message, which can quote the data being written.
 */
export function causeOf(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? `${err.name} ${code}` : err.name;
  }
  return typeof err;
}

/** Runs `work` detached; a rejection is logged once with its cause and goes no further. */
export function runDetached(logger: Logger, task: string, work: () => Promise<unknown>): void {
  const failed = (err: unknown): void => logger.warn(`${task} failed: ${causeOf(err)}`);
  try {
    work().then(() => undefined, failed);
  } catch (err) {
    failed(err);
  }
}

/** Settles when `work` does or after `ms`, whichever is first; `work` must not reject. */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms).unref();
  });
  await Promise.race([work, elapsed]);
  clearTimeout(timer);
}

export interface RetryHandle {
  /** Stops retrying; an attempt under way finishes. */
  stop(): void;
  /** Settles once an attempt succeeded or the loop was stopped. */
  readonly done: Promise<void>;
}

/**
 * Calls `attempt` until it resolves, waiting `backoffDelay` between failures and logging each failure as
 * one line. For a task that must eventually succeed, such as re-subscribing a change listener.
 */
export function retryUntilDone(
  logger: Logger,
  task: string,
  attempt: () => Promise<void>,
  options: BackoffOptions = DEFAULT_BACKOFF,
): RetryHandle {
  let stopped = false;
  let waiting: { timer: NodeJS.Timeout; wake: () => void } | null = null;
  const sleep = (ms: number): Promise<void> =>
    new Promise((wake) => {
      waiting = { timer: setTimeout(wake, ms).unref(), wake };
    });
  const done = (async () => {
    for (let failures = 0; !stopped; failures++) {
      try {
        await attempt();
        return;
      } catch (err) {
        if (stopped) {
          return;
        }
        const delay = backoffDelay(failures, options);
        logger.warn(`${task} failed: ${causeOf(err)}; retrying in ${delay} ms`);
        await sleep(delay);
      }
    }
  })();
  return {
    done,
    stop: () => {
      stopped = true;
      const current = waiting;
      if (current !== null) {
        clearTimeout(current.timer);
        current.wake();
      }
    },
  };
}

/**
 * An outbox's look, repeated: at once, then every `everyMs` after the previous look ended (looks never
 * overlap); after failed looks (a database outage), later, with capped backoff. `stop` ends the loop and
 * gives the look under way at most `waitMs` to finish.
 */
export class Poller {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly logger: Logger,
    private readonly task: string,
    private readonly look: () => Promise<unknown>,
    private readonly everyMs: number,
    private readonly backoff: BackoffOptions = { initialMs: everyMs, maxMs: 60_000 },
  ) {}

  start(): void {
    this.schedule(0, 0);
  }

  async stop(waitMs: number): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) {
      clearTimeout(this.timer);
    }
    if (this.running !== null) {
      await waitAtMost(this.running, waitMs);
    }
  }

  private schedule(delayMs: number, failures: number): void {
    if (this.stopped) {
      return;
    }
    this.timer = setTimeout(() => {
      this.running = this.look().then(
        () => this.schedule(this.everyMs, 0),
        (err: unknown) => {
          this.logger.warn(`${this.task} failed: ${causeOf(err)}`);
          this.schedule(backoffDelay(failures, this.backoff), failures + 1);
        },
      );
    }, delayMs).unref();
  }
}
