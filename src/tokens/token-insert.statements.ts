import type { StatementPart } from '../database/composed-statement';
import { Token } from './token.entity';

/*
 * The INSERT statements of new tokens and of their blind indexes, as statement parts: run alone
 * (TokensRepository.insert) or composed with the outbox and audit rows into one (insertWith).
 */

/** Columns of a new token, in the parameter order of both INSERT statements (see insertValues). */
const INSERT_COLUMNS = `tenant_id, id, type, data, data_key_version, mask, fingerprint, fingerprint_expression, containers,
  metadata, metadata_ci, search_indexes, deduplicate_token, expires_at, created_by, created_at, modified_by, modified_at,
  deleted_at`;

/** One token (POST /tokens): plain parameters cost the server less to plan and read than one-row arrays. */
const INSERT_ONE_SQL = `INSERT INTO tokens (${INSERT_COLUMNS})
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, ARRAY(SELECT jsonb_array_elements_text($9::jsonb)), $10, $11, $12, $13, $14,
    $15, $16, NULL, NULL, NULL)`;

/** The recordset's columns after the tenant: each row's own fields. */
const ROW_FIELDS = `id text, type text, data text, data_key_version int, mask jsonb, fingerprint text,
  fingerprint_expression text, containers text[], metadata jsonb, metadata_ci jsonb, search_indexes jsonb,
  deduplicate_token boolean, expires_at timestamptz`;

/** The SELECT list of a recordset row `r` from its id to its expiry. */
const ROW_VALUES = `r.id, r.type, decode(r.data, 'base64'), r.data_key_version, r.mask, r.fingerprint,
  r.fingerprint_expression, r.containers, r.metadata, r.metadata_ci, r.search_indexes, r.deduplicate_token,
  r.expires_at`;

/**
 * Any number of tokens in one statement: one JSON array of rows, so the driver sends one JSON.stringify
 * instead of escaping each element of sixteen array parameters (a tenth of a /tokenize's CPU); JSON null is
 * SQL NULL for every column type here. `json`, not `jsonb`: the database reads each field once from the
 * text instead of first building a jsonb of the whole array, and the containers arrive as text[] directly
 * (no subquery per row).
 */
const INSERT_MANY_SQL = `INSERT INTO tokens (${INSERT_COLUMNS})
  SELECT r.tenant_id, ${ROW_VALUES}, r.created_by, r.created_at, NULL, NULL, NULL
  FROM json_to_recordset($1::json) AS r(tenant_id uuid, ${ROW_FIELDS}, created_by uuid, created_at timestamptz)`;

/** INSERT_MANY_SQL for rows of one tenant, author and time (a /tokenize): those sent once, not per row. */
const INSERT_SHARED_SQL = `INSERT INTO tokens (${INSERT_COLUMNS})
  SELECT $2::uuid, ${ROW_VALUES}, $3::uuid, $4::timestamptz, NULL, NULL, NULL
  FROM json_to_recordset($1::json) AS r(${ROW_FIELDS})`;

/**
 * INSERT_SHARED_SQL for rows that also share every field but their id, ciphertext and fingerprint (a
 * /tokenize of leaves, or of definitions written alike): those three go as texts joined by a control
 * character (which no id, base64 or base58 text holds), split by the database, the other fields once as
 * parameters. Three texts cost the driver a join each and the database a split each, against a JSON row of
 * thirteen fields per token to write and to read.
 */
const INSERT_UNIFORM_SQL = `INSERT INTO tokens (${INSERT_COLUMNS})
  SELECT $4::uuid, r.id, $7::text, decode(r.data, 'base64'), $8::int, $9::jsonb, r.fingerprint, $10::text,
    ARRAY(SELECT jsonb_array_elements_text($11::jsonb)), $12::jsonb, $13::jsonb, $14::jsonb, $15::boolean,
    $16::timestamptz, $5::uuid, $6::timestamptz, NULL, NULL, NULL
  FROM unnest(string_to_array($1, chr(31)), string_to_array($2, chr(31)), string_to_array($3, chr(31)))
    AS r(id, data, fingerprint)`;

/** What INSERT_UNIFORM_SQL's texts are joined with. */
const SEPARATOR = '\x1f';

/**
 * One row of INSERT_MANY_SQL's JSON array (the data as base64), without the tenant, author and time when
 * `shared`. Times go as the text JSON.stringify would give them: a Date inside the array takes
 * JSON.stringify off its fast path (about three times the cost of the array), and the tokens of one
 * /tokenize share one created_at, so `time` turns it into text once.
 */
function insertRow(
  r: Token,
  time: (at: Date | null) => string | null,
  shared: boolean,
): Record<string, unknown> {
  const own = {
    id: r.id,
    type: r.type,
    data: r.data?.toString('base64') ?? null,
    data_key_version: r.dataKeyVersion,
    mask: r.mask ?? null,
    fingerprint: r.fingerprint,
    fingerprint_expression: r.fingerprintExpression,
    containers: r.containers,
    metadata: r.metadata ?? null,
    metadata_ci: r.metadataCi ?? null,
    search_indexes: r.searchIndexes ?? null,
    deduplicate_token: r.deduplicateToken,
    expires_at: time(r.expiresAt),
  };
  return shared
    ? own
    : { tenant_id: r.tenantId, ...own, created_by: r.createdBy, created_at: time(r.createdAt) };
}

/**
 * A new token's parameters for INSERT_ONE_SQL. Containers travel as JSON, as in INSERT_MANY_SQL.
 */
function insertValues(r: Token): unknown[] {
  const json = (value: unknown): string | null =>
    value === null || value === undefined ? null : JSON.stringify(value);
  return [
    r.tenantId,
    r.id,
    r.type,
    r.data,
    r.dataKeyVersion,
    json(r.mask),
    r.fingerprint,
    r.fingerprintExpression,
    JSON.stringify(r.containers),
    json(r.metadata),
    json(r.metadataCi),
    json(r.searchIndexes),
    r.deduplicateToken,
    r.expiresAt,
    r.createdBy,
    r.createdAt,
  ];
}

/**
 * The rows of `tokens` as one INSERT: the one-row statement for one; for more, the joined texts when they
 * differ only in id, ciphertext and fingerprint, else the JSON recordset.
 */
export function insertPart(tokens: { row: Token }[]): StatementPart {
  if (tokens.length === 1) {
    return { name: 'tokens.insert-one', text: INSERT_ONE_SQL, values: insertValues(tokens[0].row) };
  }
  const time = timeText();
  const [{ row: first }] = tokens;
  const shared = tokens.every(
    ({ row }) =>
      row.tenantId === first.tenantId &&
      row.createdBy === first.createdBy &&
      row.createdAt.getTime() === first.createdAt.getTime(),
  );
  if (shared && tokens.every(({ row }) => alike(row, first))) {
    return uniformPart(
      tokens.map((t) => t.row),
      time,
    );
  }
  const rows = JSON.stringify(tokens.map((t) => insertRow(t.row, time, shared)));
  return shared
    ? {
        name: 'tokens.insert-shared',
        text: INSERT_SHARED_SQL,
        values: [rows, first.tenantId, first.createdBy, time(first.createdAt)],
      }
    : { name: 'tokens.insert-many', text: INSERT_MANY_SQL, values: [rows] };
}

function uniformPart(rows: Token[], time: (at: Date | null) => string | null): StatementPart {
  const [first] = rows;
  const json = (value: unknown): string | null =>
    value === null || value === undefined ? null : JSON.stringify(value);
  return {
    name: 'tokens.insert-uniform',
    text: INSERT_UNIFORM_SQL,
    values: [
      rows.map((r) => r.id).join(SEPARATOR),
      rows.map((r) => (r.data as Buffer).toString('base64')).join(SEPARATOR),
      rows.map((r) => r.fingerprint).join(SEPARATOR),
      first.tenantId,
      first.createdBy,
      time(first.createdAt),
      first.type,
      first.dataKeyVersion,
      json(first.mask),
      first.fingerprintExpression,
      JSON.stringify(first.containers),
      json(first.metadata),
      json(first.metadataCi),
      json(first.searchIndexes),
      first.deduplicateToken,
      time(first.expiresAt),
    ],
  };
}

/**
 * Whether `row` can go in INSERT_UNIFORM_SQL with `first`: ciphertext and fingerprint set (nothing in them
 * to escape), every other field but the id the same as `first`'s.
 */
function alike(row: Token, first: Token): boolean {
  return (
    row.data !== null &&
    row.fingerprint !== null &&
    !row.id.includes(SEPARATOR) &&
    row.type === first.type &&
    row.dataKeyVersion === first.dataKeyVersion &&
    row.fingerprintExpression === first.fingerprintExpression &&
    row.deduplicateToken === first.deduplicateToken &&
    (row.expiresAt?.getTime() ?? null) === (first.expiresAt?.getTime() ?? null) &&
    sameTexts(row.containers, first.containers) &&
    sameJson(row.mask, first.mask) &&
    sameJson(row.metadata, first.metadata) &&
    sameJson(row.metadataCi, first.metadataCi) &&
    sameJson(row.searchIndexes, first.searchIndexes)
  );
}

function sameTexts(a: string[], b: string[]): boolean {
  return a === b || (a.length === b.length && a.every((item, i) => item === b[i]));
}

/** Equal as stored (jsonb): undefined is null, and objects compare by their JSON text. */
function sameJson(a: unknown, b: unknown): boolean {
  const left = a ?? null;
  const right = b ?? null;
  if (left === right) {
    return true;
  }
  return left !== null && right !== null && JSON.stringify(left) === JSON.stringify(right);
}

/** Date.prototype.toJSON (what JSON.stringify calls), remembering the last Date it was given. */
function timeText(): (at: Date | null) => string | null {
  let last: Date | null = null;
  let text: string | null = null;
  return (at) => {
    if (at === null) {
      return null;
    }
    if (at !== last) {
      last = at;
      text = at.toJSON();
    }
    return text;
  };
}

/** The blind-index rows of `tokens` as one INSERT; null when they have none. */
export function indexPart(tokens: { row: Token; indexHashes: string[] }[]): StatementPart | null {
  const rows = tokens.flatMap((t) =>
    t.indexHashes.map((hash) => ({ tenantId: t.row.tenantId, hash, id: t.row.id })),
  );
  if (rows.length === 0) {
    return null;
  }
  return {
    name: 'tokens.insert-indexes',
    text: 'INSERT INTO token_search_indexes (tenant_id, hash, token_id) SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[])',
    values: [rows.map((r) => r.tenantId), rows.map((r) => r.hash), rows.map((r) => r.id)],
  };
}
