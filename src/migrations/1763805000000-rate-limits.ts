import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The shared rate-limit counters (rate-limiter-flexible's RateLimiterPostgres, src/rate-limits/): one row
 * per limit and key, `expire` in epoch milliseconds. Created here so the limiter never creates tables at
 * runtime. UNLOGGED: counters are worth no WAL, and losing them in a crash only resets a window.
 */
export class RateLimits1763805000000 implements MigrationInterface {
  name = 'RateLimits1763805000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE UNLOGGED TABLE rate_limits (
      key text PRIMARY KEY,
      points integer NOT NULL DEFAULT 0,
      expire bigint
    )`);
    await q.query('CREATE INDEX rate_limits_expire ON rate_limits (expire)');
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE rate_limits');
  }
}
