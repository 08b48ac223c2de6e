/**
 * The statements of the idempotency keys (IdempotencyStore), each for many rows at once (unnest). One not
 * sent in a whole transaction (AtomicWrites) commits without waiting for its WAL flush (see claimAll).
 */

const NO_FLUSH_WAIT = `(SELECT set_config('synchronous_commit', 'off', true))`;

/**
 * Claims new keys, expired ones, and ones whose request was cut off (the same request only), answering the
 * attempt of each claim won. $1..$7 the claims' columns, $8 now, $9 their expiry, $10 the stale limit.
 */
export function claimSql(inTransaction: boolean): string {
  return `INSERT INTO idempotency_keys AS k
         (tenant_id, scope, key_hash, method, path_hash, body_hash, state, attempt, created_at, expires_at)
       SELECT r.tenant_id, r.scope, r.key_hash, r.method, r.path_hash, r.body_hash, 'running', r.attempt, $8, $9
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::uuid[])
              AS r (tenant_id, scope, key_hash, method, path_hash, body_hash, attempt)${inTransaction ? '' : `, ${NO_FLUSH_WAIT} AS no_flush_wait`}
       ON CONFLICT (tenant_id, scope, key_hash) DO UPDATE
         SET method = EXCLUDED.method, path_hash = EXCLUDED.path_hash, body_hash = EXCLUDED.body_hash,
             state = 'running', attempt = EXCLUDED.attempt, response = NULL,
             created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
         WHERE k.expires_at <= EXCLUDED.created_at
            OR (k.state = 'running' AND k.created_at <= $10 AND k.method = EXCLUDED.method
                AND k.path_hash = EXCLUDED.path_hash AND k.body_hash = EXCLUDED.body_hash)
       RETURNING k.attempt`;
}

/** Keeps the answers of the tickets' requests: $1..$4 the tickets' columns, $5 the sealed answers. */
export const COMPLETE_SQL = `UPDATE idempotency_keys AS k SET state = 'done', response = r.response
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::bytea[])
              AS r (tenant_id, scope, key_hash, attempt, response)
       WHERE k.tenant_id = r.tenant_id AND k.scope = r.scope AND k.key_hash = r.key_hash
         AND k.attempt = r.attempt`;

/** Drops the claims of the tickets ($1..$4 their columns), whose requests failed. */
export function releaseSql(inTransaction: boolean): string {
  return `DELETE FROM idempotency_keys AS k
       USING unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[]) AS r (tenant_id, scope, key_hash, attempt)
       WHERE k.tenant_id = r.tenant_id AND k.scope = r.scope AND k.key_hash = r.key_hash
         AND k.attempt = r.attempt${inTransaction ? '' : ` AND ${NO_FLUSH_WAIT} = 'off'`}`;
}
