'use strict';
/**
 * Issue 23, item 3: `GET /v2/tokens` pages by keyset, so a page a million tokens deep costs what the first
 * does. Two rows on one tenant holding 1,000,200 tokens: its first page, and the page after a cursor that
 * 1,000,100 newer tokens sort before. Target: the deep page's p99 within 1.5× the first page's.
 *
 * How the deep cursor is made without walking 10,000 pages: 200 tokens are created through the API, the
 * first page of 100 gives a cursor at the 100th, and then a million tokens newer than those 200 are added
 * straight in PostgreSQL (copies of one token under new ids, so the load takes seconds, not an hour of
 * POST /tokenize). The cursor is unchanged (tokens created meanwhile sort before every cursor), so the page
 * after it lies behind the million. The reader's rule redacts, so no copy is ever decrypted (a copy's
 * ciphertext is bound to the original id); masking costs every page the same anyway. PostgreSQL only.
 */
const { Client } = require('pg');
const { p99Vs } = require('./targets');

const DEEP_TOKENS = 1_000_000;
const API_TOKENS = 200;
const PAGE = 100;
const FIRST = 'GET /v2/tokens first page (1M tokens)';
const DEEP = 'GET /v2/tokens page after 1,000,100 tokens';

async function seed(ctx) {
  if (ctx.cache.has('deepPages')) {
    return ctx.cache.get('deepPages');
  }
  const seeding = (async () => {
    // A tenant of its own: the million tokens leave the other scenarios' tenant as it was.
    const output = await ctx.cli([
      'tenant:create',
      '--name',
      'bench deep pages',
      '--owner-email',
      `bench-deep-${Date.now()}@token-vault.local`,
      '--json',
    ]);
    const key = JSON.parse(output.trim().split('\n').pop()).key;
    const { api } = ctx;
    const app = await api(
      'POST',
      '/applications',
      {
        name: 'deep reader',
        type: 'private',
        permissions: ['token:create', 'token:read'],
        rules: [
          {
            description: 'everything, redacted',
            priority: 1,
            container: '/',
            transform: 'redact',
            permissions: ['token:create', 'token:read'],
          },
        ],
      },
      key,
    );
    for (let i = 0; i < API_TOKENS; i += 100) {
      const batch = Array.from({ length: 100 }, (_, j) => ({ type: 'token', data: `deep ${i + j}` }));
      await api('POST', '/tokenize', batch, app.key);
    }
    const first = await api('GET', `/v2/tokens?size=${PAGE}`, undefined, app.key);
    const cursor = first.pagination.next;
    const expectedNext = (
      await api('GET', `/v2/tokens?size=${PAGE}&start=${encodeURIComponent(cursor)}`, undefined, app.key)
    ).data.map((t) => t.id);

    const started = Date.now();
    const client = new Client({ connectionString: ctx.databaseUrl });
    await client.connect();
    try {
      const tenantId = first.data[0].tenant_id;
      // Copies of the newest API token, each a millisecond apart, all newer than every API token.
      await client.query(
        `INSERT INTO tokens (tenant_id, id, type, data, data_key_version, mask, fingerprint, fingerprint_expression,
                             containers, metadata, metadata_ci, search_indexes, deduplicate_token, expires_at,
                             created_by, created_at, modified_by, modified_at, deleted_at)
         SELECT t.tenant_id, 'deep-' || g, t.type, t.data, t.data_key_version, t.mask, t.fingerprint,
                t.fingerprint_expression, t.containers, t.metadata, t.metadata_ci, t.search_indexes,
                t.deduplicate_token, t.expires_at, t.created_by, t.created_at + g * interval '1 millisecond',
                NULL, NULL, NULL
           FROM tokens t, generate_series(1, $3) g
          WHERE t.tenant_id = $1 AND t.id = $2`,
        [tenantId, first.data[0].id, DEEP_TOKENS],
      );
      await client.query('ANALYZE tokens');
    } finally {
      await client.end();
    }
    ctx.log(`added ${DEEP_TOKENS} tokens in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    ctx.record('deep_tokens', DEEP_TOKENS + API_TOKENS);
    // The cursor still leads to the same 100 API tokens, now behind the million.
    const deep = await api(
      'GET',
      `/v2/tokens?size=${PAGE}&start=${encodeURIComponent(cursor)}`,
      undefined,
      app.key,
    );
    const ids = deep.data.map((t) => t.id);
    if (JSON.stringify(ids) !== JSON.stringify(expectedNext)) {
      throw new Error(`${DEEP}: the cursor's page changed after the load`);
    }
    const newest = await api('GET', `/v2/tokens?size=${PAGE}`, undefined, app.key);
    if (!newest.data.every((t) => t.id.startsWith('deep-'))) {
      throw new Error(`${FIRST}: the first page should hold the newest copies`);
    }
    return { key: app.key, cursor };
  })();
  ctx.cache.set('deepPages', seeding);
  return seeding;
}

const page = (path) => (ctx, data) => ({
  method: 'GET',
  path: path(data),
  headers: { 'bt-api-key': data.key },
});

module.exports = [
  {
    name: FIRST,
    group: 'v2-deep',
    database: 'postgres',
    connections: 1,
    preciseLatency: true,
    setup: seed,
    request: page(() => `/v2/tokens?size=${PAGE}`),
  },
  {
    name: DEEP,
    group: 'v2-deep',
    database: 'postgres',
    connections: 1,
    preciseLatency: true,
    setup: seed,
    request: page((data) => `/v2/tokens?size=${PAGE}&start=${encodeURIComponent(data.cursor)}`),
    targets: [p99Vs(FIRST, 1.5)],
  },
];
