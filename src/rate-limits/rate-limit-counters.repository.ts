import { Injectable } from '@nestjs/common';
import type { QueryConfig, QueryResult } from 'pg';
import { Database } from '../database/database.service';

/** The table the migration 1763805000000-rate-limits creates. */
export const RATE_LIMIT_TABLE = 'rate_limits';

/** Lowers a count in the window that ends near $4 (± $5 ms) and has not ended; never below zero. */
const GIVE_BACK_SQL = `UPDATE ${RATE_LIMIT_TABLE} SET points = GREATEST(points - $2, 0)
  WHERE key = $1 AND expire > $3::bigint AND expire BETWEEN $4::bigint - $5::bigint AND $4::bigint + $5::bigint`;

/** The client shape rate-limiter-flexible's PostgreSQL limiter sends its statements through. */
export interface LibraryClient {
  query(q: QueryConfig): Promise<QueryResult>;
}

/**
 * The rate-limit counters kept in the database: the library's fixed-window upserts, and the vault's own
 * give-back and purge. Every statement goes on a connection of its own, in no transaction: a count stands
 * whatever becomes of the request that made it, and holds no row lock for that request's duration.
 */
@Injectable()
export class RateLimitCountersRepository {
  /** For the library's limiter: its named statements are prepared, or not, as the data layer decides. */
  readonly libraryClient: LibraryClient = {
    query: (q) => this.db.alone({ name: q.name, text: q.text, values: q.values }),
  };

  constructor(private readonly db: Database) {}

  /**
   * Takes `points` back from `key`'s count if its window has not ended (`now`) and ends within `slackMs`
   * of `windowEnd`, so points never move into the next window.
   */
  async giveBack(
    key: string,
    points: number,
    now: number,
    windowEnd: number,
    slackMs: number,
  ): Promise<void> {
    await this.db.alone({
      name: 'tv-rate-limit-give-back',
      text: GIVE_BACK_SQL,
      values: [key, points, now, windowEnd, slackMs],
    });
  }

  /** Deletes the counters whose window ended before `before` (epoch ms). */
  async deleteExpired(before: number): Promise<number> {
    const result = await this.db.alone({
      text: `DELETE FROM ${RATE_LIMIT_TABLE} WHERE expire < $1`,
      values: [before],
    });
    return result.rowCount ?? 0;
  }
}
