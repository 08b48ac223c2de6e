import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { DATABASE_RETRY_AFTER_SECONDS } from '../common/database-unavailable';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { MasterKeyProvider } from '../crypto/master-key-provider';
import { MasterKeyring } from '../crypto/master-keyring.service';
import { ChangeFeed, FeedState } from '../database/change-feed';
import { SandboxProvider } from '../sandbox/sandbox.provider';
import { Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { DatabaseHealth, NotReady, within } from './database-health';
import { HealthDto } from './dto/health.dto';

/** One part that must work before the vault takes traffic. */
export interface ReadinessCheck {
  /** Named in the answer: `database`, `migrations`, ... */
  name: string;
  /**
   * Returns or resolves when the part works; a NotReady error carries a reason anyone may read. A string
   * returned says the part works in a degraded way, which is reported but does not fail readiness.
   */
  run: () => Promise<void | string> | void | string;
}

export interface Readiness {
  status: 'ok';
  checks: Record<string, 'ok' | 'degraded'>;
  /** Parts that work but not fully, and why: the vault still takes traffic. */
  degraded?: Record<string, string>;
}

/** What /health/ready says about the change feed when it cannot promise prompt invalidation. */
/** How long /health/ready reuses its master-key check: a probe a second costs one key operation in five. */
const KEY_CHECK_TTL_MS = 5000;

/** The last master-key check: its outcome (null: the keys work), for this keyring, until `until`. */
interface KeyCheck {
  keyring: unknown;
  failure: NotReady | null;
  until: number;
}

const FEED_DEGRADED: Partial<Record<FeedState, string>> = {
  unverified: 'checking that change notifications arrive; cached keys live at most 1 s meanwhile',
  silent:
    'change notifications sent through DATABASE_URL do not arrive (a pooler in transaction mode?): ' +
    'cached keys live at most 1 s; set DATABASE_LISTEN_URL to a direct connection',
  down: 'the change listener is reconnecting; cached keys live at most 1 s meanwhile',
};

/**
 * Liveness (the process serves) and readiness (the parts it needs work) for orchestrators: Kubernetes
 * restarts a pod whose liveness fails and stops routing to one whose readiness fails, so a database outage
 * fails readiness only.
 */
@Injectable()
export class HealthService implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Health');
  private stopping = false;
  private keysProblem: string | null = null;
  private keyCheck: KeyCheck | null = null;
  /** Between listening and the end of first-run setup (main.ts): the bootstrap key may not work yet. */
  private settingUp = false;
  /** Run in parallel on every /health/ready, each within the database connect timeout. */
  private readonly checks: ReadinessCheck[];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    database: DatabaseHealth,
    keys: MasterKeyring,
    sandbox: SandboxProvider,
    feed: ChangeFeed,
    private readonly clock: Clock,
    metrics: MetricsService,
  ) {
    new Gauge({
      name: 'token_vault_sealed',
      help: 'Whether the master keys wait for unseal shares (1) or are loaded (0)',
      registers: [metrics.registry],
      collect() {
        this.set(keys.sealed ? 1 : 0);
      },
    });
    this.checks = [
      { name: 'database', run: () => database.check() },
      { name: 'migrations', run: () => database.checkMigrations() },
      {
        name: 'setup',
        run: () => {
          if (this.settingUp) {
            throw new NotReady('first-run setup (the default tenant and its key) has not finished');
          }
        },
      },
      {
        name: 'keys',
        run: async () => {
          if (keys.sealed) {
            throw new NotReady(
              'sealed: the master keys are not loaded until enough shares are given (cli unseal)',
            );
          }
          // Master-key operations (an HSM round trip each) at most once per KEY_CHECK_TTL_MS per keyring.
          const now = this.clock.now().getTime();
          const cached = this.keyCheck;
          const check =
            cached !== null && cached.keyring === keys.keyring && cached.until > now
              ? cached
              : await this.checkKeys(keys, now);
          if (check.failure !== null) {
            throw check.failure;
          }
        },
      },
      {
        name: 'sandbox',
        run: () => {
          if (!sandbox.isUp()) {
            throw new NotReady('no worker process is running');
          }
        },
      },
      // Not a failure: every replica behind the same pooler would leave the rotation together, while the
      // short cache lifetime keeps revocation within a second.
      { name: 'notifications', run: () => FEED_DEGRADED[feed.state] },
    ];
  }

  /** Opens a key with the master keys and every tenant key's master key; remembered for KEY_CHECK_TTL_MS. */
  private async checkKeys(keys: MasterKeyring, now: number): Promise<KeyCheck> {
    const keyring = keys.keyring;
    let failure: NotReady | null = null;
    try {
      await assertKeyringWorks(keyring);
      const problem = await keys.problem();
      // The route is public: the key ids and the remedy go to the log (once per change), not the answer.
      if (problem !== this.keysProblem && problem !== null) {
        this.logger.error(`Master keys: ${problem}`);
      }
      this.keysProblem = problem;
      if (problem !== null) {
        failure = new NotReady(
          'the configured master keys do not open every tenant key (see the service log)',
        );
      }
    } catch (err) {
      if (!(err instanceof NotReady)) {
        throw err;
      }
      failure = err;
    }
    this.keyCheck = { keyring, failure, until: now + KEY_CHECK_TTL_MS };
    return this.keyCheck;
  }

  /** Readiness answers 503 (`setup`) until the returned `done()`; main.ts calls it before listening. */
  firstRunSetup(): { done: () => void } {
    this.settingUp = true;
    return {
      done: () => {
        this.settingUp = false;
      },
    };
  }

  /** From the moment shutdown begins (SIGTERM), liveness and readiness answer 503. */
  shuttingDown(): void {
    this.stopping = true;
  }

  beforeApplicationShutdown(): void {
    this.shuttingDown();
  }

  /** GET /health: up, and the version (which /health/live leaves out: probes need no more than the status). */
  up(): HealthDto {
    return { status: 'ok', version: this.config.build.version };
  }

  live(): { status: 'ok' } {
    if (this.stopping) {
      throw new ApiError(503, 'The service is shutting down.');
    }
    return { status: 'ok' };
  }

  /** 200 with every part listed, or 503 naming each failing part and why (never a secret). */
  async ready(): Promise<Readiness> {
    if (this.stopping) {
      throw new ApiError(503, 'Not ready: the service is shutting down.');
    }
    const results = await Promise.all(
      this.checks.map(async ({ name, run }) => {
        try {
          const degraded = await within(Promise.resolve().then(run), this.config.databaseConnectTimeoutMs);
          return { name, failure: null, degraded: degraded ?? null };
        } catch (err) {
          return { name, failure: err instanceof NotReady ? err.message : 'failed', degraded: null };
        }
      }),
    );
    const failed = results.flatMap(({ name, failure }) => (failure === null ? [] : [{ name, failure }]));
    if (failed.length > 0) {
      throw new ApiError(
        503,
        `Not ready: ${failed.map((r) => r.name).join(', ')}.`,
        Object.fromEntries(failed.map((r) => [r.name, [r.failure]])),
        { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
      );
    }
    const degraded = results.flatMap(({ name, degraded }) =>
      degraded === null ? [] : [[name, degraded] as const],
    );
    const checks: Readiness['checks'] = {};
    for (const r of results) {
      checks[r.name] = r.degraded === null ? 'ok' : 'degraded';
    }
    return {
      status: 'ok',
      checks,
      ...(degraded.length > 0 ? { degraded: Object.fromEntries(degraded) } : {}),
    };
  }
}

/** The master keys are loaded and usable: a random key wraps and unwraps to itself. */
async function assertKeyringWorks(keyring: MasterKeyProvider | undefined): Promise<void> {
  const probe = randomBytes(32);
  try {
    if (
      keyring !== undefined &&
      (await keyring.unwrap(await keyring.wrap(probe, 'readiness'), 'readiness')).equals(probe)
    ) {
      return;
    }
  } catch {
    // Reported below without the keyring's own message.
  }
  throw new NotReady('the master keys are not loaded');
}
