import { Clock } from '../../src/common/clock';

/**
 * The Clock double (`overrides: [{ provide: Clock, useValue: clock }]`): real time until a test sets it,
 * then stopped where the test puts it, so expiry is tested by moving time instead of sleeping.
 */
export class TestClock extends Clock {
  private stoppedAt: number | null = null;

  override now(): Date {
    return this.stoppedAt === null ? super.now() : new Date(this.stoppedAt);
  }

  /** Stops the clock at `time`. */
  set(time: Date | number): void {
    this.stoppedAt = new Date(time).getTime();
  }

  /** Moves the clock `ms` forward from what it shows now, and stops it there. */
  advance(ms: number): void {
    this.set(this.now().getTime() + ms);
  }

  /** Back to real time. */
  reset(): void {
    this.stoppedAt = null;
  }
}
