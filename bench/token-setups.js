'use strict';
// The token rows' data and requests: created, revealed, listed, tokenized and replayed tokens.
const { cardBody } = require('./card-body');
const { FLOOR_CONNECTIONS, NAMES } = require('./hot-path-names');
const { randomGet } = require('./floor-scenarios');
const { RUN, jsonHeaders, runPool, revealApplication } = require('./scenario-support');

const { GET_TOKEN, LIST_BY_METADATA } = NAMES;

const READ_TOKENS = 1000;
const SEED_TOKENS = 100_000;
/** Seconds to let the vault's own maintenance (statistics) catch up after seeding. */
const SETTLE_SECONDS = 12;
const SEED_BATCH = 100;
const SEED_CONCURRENCY = 4;
/** 100,000 tokens over 5,000 values: every value matches 20 tokens, one default page. */
const METADATA_VALUES = 5000;
const TOKENIZE_LEAVES = 100;

/** Keys POST_TOKENS_REPLAY replays, each with its own stored answer. */
const REPLAY_KEYS = 200;

/**
 * Stores REPLAY_KEYS answers (one POST /tokens each, with its own key and card) and checks that the vault
 * honours BT-IDEMPOTENCY-KEY before its cost is measured: sent again, each gives the same token, marked as a
 * replay. Returns the keys and bodies, replayed by POST_TOKENS_REPLAY.
 */
async function idempotencySetup(ctx) {
  if (!ctx.cache.has('idempotency')) {
    ctx.cache.set('idempotency', storeReplays(ctx));
  }
  return ctx.cache.get('idempotency');
}

async function storeReplays(ctx) {
  const app = await revealApplication(ctx);
  const send = (replay) =>
    fetch(`${ctx.baseUrl}/tokens`, {
      method: 'POST',
      headers: { ...jsonHeaders(app.key), 'bt-idempotency-key': replay.key },
      body: replay.body,
    });
  const replays = Array.from({ length: REPLAY_KEYS }, (_, i) => ({
    key: `bench-${RUN}-replay-${i}`,
    body: JSON.stringify(cardBody()),
  }));
  await runPool(REPLAY_KEYS, SEED_CONCURRENCY, async (i) => {
    const first = await send(replays[i]);
    const firstBody = await first.text();
    const again = await send(replays[i]);
    const againBody = await again.text();
    if (
      first.status !== 201 ||
      again.status !== 201 ||
      again.headers.get('idempotent-replayed') !== 'true' ||
      JSON.parse(firstBody).id !== JSON.parse(againBody).id
    ) {
      throw new Error(
        `POST /tokens with BT-IDEMPOTENCY-KEY was not replayed: ${first.status} then ${again.status} ` +
          `(Idempotent-Replayed: ${again.headers.get('idempotent-replayed')}) ${againBody.slice(0, 300)}`,
      );
    }
  });
  return { key: app.key, replays };
}

/** POST /tokens of a new card on every request, by the reveal application (POST_TOKENS and its floor). */
function cardRequest(ctx, app) {
  return {
    requests: [
      {
        method: 'POST',
        path: '/tokens',
        headers: jsonHeaders(app.key),
        setupRequest: (req) => ({ ...req, body: JSON.stringify(cardBody()) }),
      },
    ],
  };
}

/** READ_TOKENS card tokens to reveal (GET_TOKEN and its floor), checked to come back revealed. */
async function revealTokens(ctx) {
  if (!ctx.cache.has('revealTokens')) {
    ctx.cache.set('revealTokens', createRevealTokens(ctx));
  }
  return ctx.cache.get('revealTokens');
}

async function createRevealTokens(ctx) {
  const app = await revealApplication(ctx);
  const ids = [];
  for (let created = 0; created < READ_TOKENS; created += SEED_BATCH) {
    const tokens = await ctx.api('POST', '/tokenize', Array.from({ length: SEED_BATCH }, cardBody), app.key);
    ids.push(...tokens.map((t) => t.id));
  }
  const sample = await ctx.api('GET', `/tokens/${ids[0]}`, undefined, app.key);
  if (!/^\d{16}$/.test(sample?.data?.number ?? '')) {
    throw new Error(`${GET_TOKEN}: expected the card number revealed, got ${JSON.stringify(sample?.data)}`);
  }
  return { key: app.key, ids, tenantId: sample.tenant_id };
}

/**
 * The list row's tokens: SEED_TOKENS of one tenant, METADATA_VALUES metadata values (SEED_TOKENS ÷
 * METADATA_VALUES tokens each), seeded once per run and shared with the list floor: { key, tenantId }.
 */
async function listTokens(ctx) {
  if (!ctx.cache.has('listTokens')) {
    ctx.cache.set('listTokens', createListTokens(ctx));
  }
  return ctx.cache.get('listTokens');
}

async function createListTokens(ctx) {
  const app = await revealApplication(ctx);
  const batches = SEED_TOKENS / SEED_BATCH;
  const started = Date.now();
  let done = 0;
  ctx.log(
    `seeding ${SEED_TOKENS} tokens: ${batches} × POST /tokenize of ${SEED_BATCH} definitions, ${SEED_CONCURRENCY} at a time`,
  );
  await runPool(batches, SEED_CONCURRENCY, async (batch) => {
    const definitions = Array.from({ length: SEED_BATCH }, (_, i) => {
      const n = batch * SEED_BATCH + i;
      return { type: 'token', data: `v-${RUN}-${n}`, metadata: { k: `v${n % METADATA_VALUES}` } };
    });
    await ctx.api('POST', '/tokenize', definitions, app.key);
    done += 1;
    if (done % (batches / 10) === 0) {
      ctx.log(`  ${done * SEED_BATCH} tokens, ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  });
  const seconds = (Date.now() - started) / 1000;
  ctx.log(
    `seeded ${SEED_TOKENS} tokens in ${seconds.toFixed(1)} s (${Math.round(SEED_TOKENS / seconds)} tokens/s)`,
  );
  ctx.record('seeded_tokens', SEED_TOKENS);
  ctx.record('seed_seconds', Math.round(seconds * 10) / 10);
  // The vault refreshes planner statistics by itself after a bulk load (checked every 5 s on the embedded
  // database, autovacuum on PostgreSQL): measure the steady state, not the minute after the load.
  ctx.log(`waiting ${SETTLE_SECONDS} s for the vault's table maintenance after the bulk load`);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_SECONDS * 1000));
  const sample = await ctx.api('GET', '/tokens?metadata.k=v42', undefined, app.key);
  const expected = SEED_TOKENS / METADATA_VALUES;
  if (sample.pagination.total_items !== expected || sample.data.length !== expected) {
    throw new Error(
      `${LIST_BY_METADATA}: expected ${expected} matches for v42, got ${JSON.stringify(sample.pagination)}`,
    );
  }
  return { key: app.key, tenantId: sample.data[0].tenant_id };
}

/** GET /tokens by a random one of the METADATA_VALUES metadata values (LIST_BY_METADATA and its floor). */
function listRequest(ctx, setup) {
  return randomGet(setup, () => `/tokens?metadata.k=v${Math.floor(Math.random() * METADATA_VALUES)}`);
}

/** A run of POST /tokenize with 100 new leaves per request; issue 39 takes the median of three. */
function tokenizeRun(name, run) {
  return {
    name,
    group: 'floors',
    connections: FLOOR_CONNECTIONS,
    setup: revealApplication,
    request: (ctx, app) => {
      let counter = 0;
      return {
        requests: [
          {
            method: 'POST',
            path: '/tokenize',
            headers: jsonHeaders(app.key),
            setupRequest: (req) => {
              counter += 1;
              const leaves = Array.from(
                { length: TOKENIZE_LEAVES },
                (_, i) => `leaf-${RUN}-${run}-${counter}-${i}`,
              );
              return { ...req, body: JSON.stringify(leaves) };
            },
          },
        ],
      };
    },
    tokensPerRequest: TOKENIZE_LEAVES,
  };
}

module.exports = {
  idempotencySetup,
  cardRequest,
  revealTokens,
  listTokens,
  listRequest,
  tokenizeRun,
};
