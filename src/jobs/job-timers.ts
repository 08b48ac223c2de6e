import { Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { BackoffOptions, Poller, runDetached } from '../common/supervisor';

/** One scheduled job: when it runs, and the one service method it awaits (which has its own test). */
export interface ScheduledJob {
  name: string;
  /**
   * A cron expression, a fixed interval, once after boot, or a poll: at once, then `pollEveryMs` after the
   * previous look ended (looks never overlap), later with capped backoff after failed looks.
   */
  when:
    | { cron: string }
    | { everyMs: number }
    | { afterBootMs: number }
    | { pollEveryMs: number; backoff?: BackoffOptions };
  /**
   * Who runs it: `each` replica that schedules jobs (its own state, or rows it claims one at a time), or
   * `one` replica at a time across those sharing the database (JobRunner.runExclusive in the service).
   */
  replicas: 'each' | 'one';
  /** Keeps this replica's own machinery working: scheduled with JOBS_ENABLED=false too. */
  always?: boolean;
  /** False where it has no work (PostgreSQL has autovacuum; the embedded database has no listener). */
  onlyIf?: boolean;
  /** Needs the master keys: skipped, without a log line, while the vault is sealed (VAULT_SEALED). */
  needsKeys?: boolean;
  /** A poll's look under way gets this long to finish when the app stops (then its claims lapse). */
  stopWaitMs?: number;
  /** Told as the app stops, before that wait (a sender stops claiming). */
  windDown?: () => void;
  run: () => Promise<unknown>;
}

/** A started job: `stop` ends its timer and resolves once a look under way ended or its wait is over. */
export type StopJob = () => Promise<void>;

/**
 * Starts jobs on timers. Cron, interval and after-boot jobs are registered with @nestjs/schedule's registry
 * (visible to anything that lists scheduled work); a poll times itself (each look waits for the previous).
 * A tick that fails, a database outage included, is one log line: the next tick runs again, and the
 * process never ends on it.
 */
export class JobTimers {
  constructor(
    private readonly registry: SchedulerRegistry,
    private readonly logger: Logger,
    /** Whether a tick of `job` should run now (the sealed state is checked per tick). */
    private readonly due: (job: ScheduledJob) => boolean,
  ) {}

  start(job: ScheduledJob): StopJob {
    const when = job.when;
    if ('pollEveryMs' in when) {
      const look = (): Promise<unknown> => (this.due(job) ? job.run() : Promise.resolve());
      const poller = new Poller(this.logger, `job ${job.name}`, look, when.pollEveryMs, when.backoff);
      poller.start();
      return () => {
        job.windDown?.();
        return poller.stop(job.stopWaitMs ?? 0);
      };
    }
    const tick = (): void => {
      if (this.due(job)) {
        runDetached(this.logger, `job ${job.name}`, job.run);
      }
    };
    if ('cron' in when) {
      this.registry.addCronJob(job.name, CronJob.from({ cronTime: when.cron, onTick: tick, start: true }));
      return this.unregister('cron', job.name);
    }
    if ('everyMs' in when) {
      this.registry.addInterval(job.name, setInterval(tick, when.everyMs).unref());
      return this.unregister('interval', job.name);
    }
    this.registry.addTimeout(job.name, setTimeout(tick, when.afterBootMs).unref());
    return this.unregister('timeout', job.name);
  }

  /** ScheduleModule may have cleared its registry on shutdown before this runs: remove only what is left. */
  private unregister(type: 'cron' | 'interval' | 'timeout', name: string): StopJob {
    return () => {
      if (this.registry.doesExist(type, name)) {
        if (type === 'cron') {
          this.registry.deleteCronJob(name);
        } else if (type === 'interval') {
          this.registry.deleteInterval(name);
        } else {
          this.registry.deleteTimeout(name);
        }
      }
      return Promise.resolve();
    };
  }
}
