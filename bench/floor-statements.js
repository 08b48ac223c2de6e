'use strict';
/**
 * The statements of issue 39's floors (bench/floor-server.js, bench/nest-floor.js): the database work the
 * vault cannot avoid on its hot paths, each request's work in ONE statement (one round trip), its audit rows
 * written by the same statement as the token work (data-modifying CTEs). Reads go to the vault's own `tokens`
 * table; created tokens and every audit row go to the floor's own tables, created at start:
 *   bench_floor_tokens  id, tenant, type, data, metadata, created_at (primary key only)
 *   bench_floor_audit   the columns of the vault's audit_records a request fills, insert-only (a trigger
 *                       refuses UPDATE and DELETE), indexed by time, by entity and by token_ids (the list
 *                       floor's records, bench/list-floor.js) like the vault's
 * Statements are named (prepared), as the vault's are (DATABASE_PREPARED_STATEMENTS). Reads are by primary key
 * alone, as the vault's: `AND deleted_at IS NULL` would let PostgreSQL's generic plan pick a partial index.
 */
const { randomUUID } = require('node:crypto');

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS bench_floor_tokens (
    tenant_id uuid NOT NULL, id uuid NOT NULL, type text NOT NULL, data jsonb NOT NULL, metadata jsonb,
    created_at timestamptz NOT NULL, PRIMARY KEY (tenant_id, id))`,
  `CREATE TABLE IF NOT EXISTS bench_floor_audit (
    tenant_id uuid NOT NULL, id uuid NOT NULL, created_at timestamptz NOT NULL, actor_id uuid,
    actor_type text NOT NULL, entity_type text NOT NULL, entity_id text, operation text NOT NULL,
    outcome text NOT NULL, message text NOT NULL, request_id text, remote_address text, user_agent text,
    PRIMARY KEY (tenant_id, id))`,
  'CREATE INDEX IF NOT EXISTS bench_floor_audit_time ON bench_floor_audit (tenant_id, created_at DESC, id)',
  `CREATE INDEX IF NOT EXISTS bench_floor_audit_entity
    ON bench_floor_audit (tenant_id, entity_type, entity_id, created_at DESC)`,
  // The list floor's records name the page's tokens, indexed as the vault's audit_records_token_ids.
  'ALTER TABLE bench_floor_audit ADD COLUMN IF NOT EXISTS token_ids text[]',
  `CREATE INDEX IF NOT EXISTS bench_floor_audit_token_ids ON bench_floor_audit USING gin (token_ids)
    WITH (fastupdate = off) WHERE token_ids IS NOT NULL`,
  `CREATE OR REPLACE FUNCTION bench_floor_audit_insert_only() RETURNS trigger LANGUAGE plpgsql AS
    $$BEGIN RAISE EXCEPTION 'bench_floor_audit is insert-only'; END$$`,
  `CREATE OR REPLACE TRIGGER bench_floor_audit_insert_only BEFORE UPDATE OR DELETE ON bench_floor_audit
    FOR EACH STATEMENT EXECUTE FUNCTION bench_floor_audit_insert_only()`,
];

/** The audit columns every floor statement fills, after tenant_id, id and created_at. */
const AUDIT_COLUMNS = `tenant_id, id, created_at, actor_id, actor_type, entity_type, entity_id, operation, outcome,
  message, request_id, remote_address, user_agent`;

/** $1 tenant, $2 token id, $3 type, $4 data, $5 metadata; audit: $6 id, $7 actor, $8 request id, $9, $10. */
const CREATE = {
  name: 'floor_create',
  text: `WITH token AS (
      INSERT INTO bench_floor_tokens (tenant_id, id, type, data, metadata, created_at)
      VALUES ($1, $2, $3, $4, $5, now()) RETURNING tenant_id, id, created_at)
    INSERT INTO bench_floor_audit (${AUDIT_COLUMNS})
    SELECT tenant_id, $6, created_at, $7, 'application', 'token', id::text, 'create', 'success', 'Token created',
      $8, $9, $10
    FROM token`,
};

/** $1 tenant, $2 token id; audit: $3 id, $4 actor, $5 request id, $6 address, $7 user agent. */
const REVEAL = {
  name: 'floor_reveal',
  text: `WITH token AS (
      SELECT * FROM tokens WHERE tenant_id = $1 AND id = $2),
    audit AS (
      INSERT INTO bench_floor_audit (${AUDIT_COLUMNS})
      SELECT tenant_id, $3, now(), $4, 'application', 'token', id, 'read', 'success', 'Token read', $5, $6, $7
      FROM token)
    SELECT * FROM token`,
};

/**
 * $1 tenant, $2 token ids; audit: $3 and $4 ids, $5 actor, $6 request id, $7 address, $8 user agent (then
 * the second record's own). Two audit rows: the detokenization (its tokens) and `second`, the work the tokens
 * are read for (SQL of its entity type, entity id, operation, outcome and message).
 */
const readTokensAudited = (name, columns, second) => ({
  name,
  text: `WITH token AS (
      SELECT ${columns} FROM tokens WHERE tenant_id = $1 AND id = ANY($2)),
    audit AS (
      INSERT INTO bench_floor_audit (${AUDIT_COLUMNS}) VALUES
        ($1, $3, now(), $5, 'application', 'token', array_to_string($2::text[], ','), 'detokenize', 'success',
          'Tokens detokenized', $6, $7, $8),
        ($1, $4, now(), $5, 'application', ${second}, $6, $7, $8))
    SELECT ${columns} FROM token`,
});

/** The rows a proxied request names and the vault's two records for it: its tokens used, the call. */
const PROXY = readTokensAudited(
  'floor_proxy',
  'id, data',
  `'proxy', NULL, 'proxy', 'success', 'Request proxied'`,
);

/** The tokens a reaction names ($9 the reactor's id) and its two records: its tokens used, the invocation. */
const REACT = readTokensAudited(
  'floor_react',
  'id, data, deleted_at',
  `'reactor', $9, 'react', 'success', 'Reactor invoked'`,
);

/** What every audit row says of the request: who (an actor id), its request id, address and user agent. */
function requestFields(headers, remoteAddress) {
  return [
    headers['floor-actor-id'] ?? null,
    randomUUID(),
    remoteAddress ?? null,
    headers['user-agent'] ?? null,
  ];
}

/**
 * In a floor's child process: its `pg` pool (FLOOR_DATABASE_URL, FLOOR_POOL_SIZE), the floor's tables
 * created, and the statements on it, each resolving to what the route answers: { pool, statements }.
 */
async function openFloorDatabase() {
  const { Pool } = require('pg');
  const pool = new Pool({
    connectionString: process.env.FLOOR_DATABASE_URL,
    max: Number(process.env.FLOOR_POOL_SIZE),
  });
  for (const statement of SCHEMA) {
    await pool.query(statement);
  }
  return { pool, statements: floorStatements(pool) };
}

function floorStatements(pool) {
  return {
    /** A card token and its audit row: { id, type }. */
    async create(tenantId, token, headers, remoteAddress) {
      const id = randomUUID();
      await pool.query({
        ...CREATE,
        values: [
          tenantId,
          id,
          token.type,
          JSON.stringify(token.data),
          JSON.stringify(token.metadata ?? null),
          randomUUID(),
          ...requestFields(headers, remoteAddress),
        ],
      });
      return { id, type: token.type };
    },
    /** The token's row (data base64), its read audited; null when there is none or it is deleted. */
    async reveal(tenantId, id, headers, remoteAddress) {
      const { rows } = await pool.query({
        ...REVEAL,
        values: [tenantId, id, randomUUID(), ...requestFields(headers, remoteAddress)],
      });
      const row = rows[0];
      if (row === undefined || row.deleted_at !== null) {
        return null;
      }
      return { ...row, data: row.data === null ? null : row.data.toString('base64') };
    },
    /** The rows of `ids`, the detokenization and the forwarded call audited. */
    async proxy(tenantId, ids, headers, remoteAddress) {
      const { rows } = await pool.query({
        ...PROXY,
        values: [tenantId, ids, randomUUID(), randomUUID(), ...requestFields(headers, remoteAddress)],
      });
      return rows;
    },
    /** The live rows of `ids` (data sealed) read for a reaction of `reactorId`, both records written. */
    async react(tenantId, reactorId, ids, headers, remoteAddress) {
      const { rows } = await pool.query({
        ...REACT,
        values: [
          tenantId,
          ids,
          randomUUID(),
          randomUUID(),
          ...requestFields(headers, remoteAddress),
          reactorId,
        ],
      });
      return rows.filter((row) => row.deleted_at === null);
    },
  };
}

module.exports = { openFloorDatabase };
