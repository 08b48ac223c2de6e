import { Logger } from '@nestjs/common';

/** The points of a keyed write at which test/idempotency/crash kills the process. */
export type CrashPoint = 'claimed' | 'worked' | 'answered' | 'committed';

const SETTING = 'TEST_IDEMPOTENCY_PAUSE_AT';
const POINTS: readonly CrashPoint[] = ['claimed', 'worked', 'answered', 'committed'];

/**
 * A test-only setting: TEST_IDEMPOTENCY_PAUSE_AT=<point> makes a keyed write stop for good at that point
 * (logging so), for a test to kill the process there. Refused when NODE_ENV=production.
 */
function configured(env: NodeJS.ProcessEnv = process.env): CrashPoint | null {
  const value = env[SETTING];
  if (value === undefined || value === '') {
    return null;
  }
  if (env.NODE_ENV === 'production') {
    throw new Error(`${SETTING} is a test setting, refused when NODE_ENV=production`);
  }
  if (!(POINTS as readonly string[]).includes(value)) {
    throw new Error(`${SETTING} must be one of ${POINTS.join(', ')}`);
  }
  return value as CrashPoint;
}

const pauseAt = configured();

/** Never settles at the configured point (the test kills the process there); at once everywhere else. */
export function crashPoint(point: CrashPoint): Promise<void> {
  if (pauseAt !== point) {
    return Promise.resolve();
  }
  new Logger('Idempotency').warn(`paused at ${point} (${SETTING})`);
  return new Promise<void>(() => undefined);
}
