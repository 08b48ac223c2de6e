'use strict';
/**
 * The list floor (bench/floor-server.js, route GET /tokens?metadata.<key>=<value>): the work no vault can avoid
 * for the list row of issue 39 (bench/scenarios.js), on the vault's own database and tokens:
 *   - the page statement the vault sends, built by the vault's own tokenListPageSql and tokenListColumns
 *     (dist/), unnamed as the vault sends it, the rows parsed with the vault's type parsers (vaultTypes);
 *   - the record naming the page's ids, in bench_floor_audit (token_ids in a partial GIN index, fastupdate off,
 *     as audit_records_token_ids), batched per tenant by the vault's own StatementBatcher (up to 64 records a
 *     statement), the vault's list record's insert; awaited before the answer;
 *   - each row's data opened with the tenant's data key (unwrapped once from `tenant_keys` with the vault's
 *     master keys, FLOOR_MASTER_KEYS, and kept as a KeyObject) by the vault's envelope `open`, bound to the row
 *     as the vault binds it (`token:<tenant>:<id>`), then JSON.parse'd;
 *   - the answer the vault gives: { pagination, data }, each token by the vault's presentToken.
 * No authentication, access rules (the container scope of the bench's application is given, ['/']), query
 * validation or rate limits: the vault's own work, which the comparison measures.
 */
const { createSecretKey, randomUUID } = require('node:crypto');
const { getMetadataArgsStorage } = require('typeorm');
const { Token } = require('../dist/src/tokens/token.entity');
const { tokenListColumns, tokenListPageSql } = require('../dist/src/tokens/token-list.statements');
const { StatementBatcher } = require('../dist/src/database/statement-batcher');
const { vaultTypes } = require('../dist/src/database/timestamptz');
const { open, sealedKeyVersion } = require('../dist/src/crypto/envelope');
const { EnvKeyProvider } = require('../dist/src/crypto/master-key-provider');
const { parseMasterKeys } = require('../dist/src/crypto/master-keys');
const { keyContext } = require('../dist/src/crypto/tenant-key.entity');
const { presentToken } = require('../dist/src/tokens/token-presenter');

const PAGE_SIZE = 20;
/** The bench application's one rule (container '/'): the scope the vault's list filters by. */
const SCOPE = ['/'];

/** The token entity's columns, as TypeORM's metadata names them (tokenListColumns reads only these two). */
const TOKEN_COLUMNS = {
  columns: getMetadataArgsStorage()
    .columns.filter((c) => c.target === Token)
    .map((c) => ({ propertyName: c.propertyName, databaseName: c.options.name ?? c.propertyName })),
};
const COLUMNS = tokenListColumns(TOKEN_COLUMNS);

/** The vault's batched audit insert (src/audit/audit.service.ts), into the floor's audit table. */
const AUDIT_INSERT = {
  name: 'floor_list_audit',
  text: `INSERT INTO bench_floor_audit (tenant_id, id, created_at, actor_id, actor_type, entity_type, entity_id,
      operation, outcome, message, request_id, remote_address, user_agent, token_ids)
    SELECT c1, c2, c3, c4, 'application', 'token', NULL, 'list', 'success', c5, c6, c7, c8,
      string_to_array(c9, chr(31))
    FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::uuid[], $5::text[], $6::text[], $7::text[],
      $8::text[], $9::text[]) AS r(c1, c2, c3, c4, c5, c6, c7, c8, c9)`,
};

/**
 * Each row's data (null for a row without), opened as the vault's TokenCipher opens it: by the tenant's data
 * key of its version (`dataKey`, tenantDataKeys), bound to `token:<tenant>:<id>`, then JSON.parse'd.
 */
async function openRows(dataKey, tenantId, rows) {
  const versions = [
    ...new Set(rows.filter((row) => row.data !== null).map((row) => sealedKeyVersion(row.data))),
  ];
  const byVersion = new Map(await Promise.all(versions.map(async (v) => [v, await dataKey(tenantId, v)])));
  return rows.map((row) =>
    row.data === null
      ? null
      : JSON.parse(
          open(byVersion.get(sealedKeyVersion(row.data)), row.data, `token:${tenantId}:${row.id}`).toString(
            'utf8',
          ),
        ),
  );
}

/**
 * The tenants' data keys on `pool`, as the vault holds them: dataKey(tenantId, version) unwraps the key from
 * `tenant_keys` with the vault's master keys (`masterKeys`, its VAULT_MASTER_KEYS) once, then keeps it.
 */
function tenantDataKeys(pool, masterKeys) {
  const keyring = new EnvKeyProvider(parseMasterKeys(masterKeys));
  const keys = new Map();
  return async (tenantId, version) => {
    const cacheKey = `${tenantId}:${version}`;
    if (!keys.has(cacheKey)) {
      const { rows } = await pool.query(
        "SELECT wrapped FROM tenant_keys WHERE tenant_id = $1 AND kind = 'data' AND version = $2",
        [tenantId, version],
      );
      const plain = await keyring.unwrap(rows[0].wrapped, keyContext(tenantId, 'data', version));
      keys.set(cacheKey, createSecretKey(plain));
      plain.fill(0);
    }
    return keys.get(cacheKey);
  };
}

/** The list route on `pool`: list(tenantId, metadata, headers, address) -> the page the vault answers. */
function listFloor(pool, masterKeys) {
  const dataKey = tenantDataKeys(pool, masterKeys);
  const records = new StatementBatcher(
    async (rows) => {
      await pool.query({ ...AUDIT_INSERT, values: rows[0].map((_, i) => rows.map((row) => row[i])) });
      return rows.map(() => undefined);
    },
    (row) => row[1],
    64,
    (row) => row[0],
  );

  return async (tenantId, metadata, headers, address) => {
    const filter = { metadata, scope: SCOPE, offset: 0, limit: PAGE_SIZE };
    const page = tokenListPageSql(tenantId, filter, new Date(), COLUMNS);
    const { rows } = await pool.query({ text: page.text, values: page.values, types: vaultTypes });
    const total = rows.length > 0 ? Number(rows[0].totalItems) : 0;
    const opened = await openRows(dataKey, tenantId, rows);
    const data = rows.map((row, i) =>
      presentToken(row, { transform: 'reveal', ...(row.data === null ? {} : { data: opened[i] }) }),
    );
    const ids = rows.map((row) => row.id);
    await records.submit([
      tenantId,
      randomUUID(),
      new Date(),
      headers['floor-actor-id'] ?? null,
      ids.length === 0 ? 'Tokens listed: none' : `Tokens listed: ${ids.join(', ')}`,
      randomUUID(),
      address ?? null,
      headers['user-agent'] ?? null,
      ids.length === 0 ? null : ids.join('\x1f'),
    ]);
    return {
      pagination: {
        total_items: total,
        page_number: 1,
        page_size: PAGE_SIZE,
        total_pages: Math.ceil(total / PAGE_SIZE),
      },
      data,
    };
  };
}

module.exports = { listFloor, openRows, tenantDataKeys };
