'use strict';
/**
 * Benchmark scenarios, run in this order by `npm run bench` (bench/run.js). Add an entry per feature.
 *
 * A scenario is
 *   name      shown in the tables and in bench/results/latest.json
 *   baseline  true for the reference every ratio is measured against (GET /health; at most one)
 *   setup     optional async (ctx) => data: prepares what the requests need through the HTTP API,
 *             e.g. `await ctx.api('POST', '/applications', {...})`; its result is passed to `request`
 *   request   an autocannon request definition, or (ctx, data) => definition:
 *               { method, path, headers, body }   one request repeated (an object body is sent as JSON)
 *               { requests: [{ method, path, headers, body, setupRequest(req, context) }, ...] }
 *             a sequence per connection; `setupRequest` may change each request (vary a body, a path;
 *             a body it sets must already be a string).
 *   connections  optional: concurrency of this scenario instead of BENCH_CONNECTIONS
 *   server    optional: 'pkcs11' sends the requests to a vault whose master key is in a SoftHSM2 token
 *             (bench/pkcs11-vault.js); 'proxy' sends the requests to a second vault that may proxy to the bench's HTTPS echo
 *             server (bench/proxy-vault.js), 'echo' to that echo server itself; both are started the first time
 *             such a scenario runs, and their ctx also has echo: { host, port, url, proxyUrl }; 'floor' and
 *             'proxy-floor' send them to a floor server (bench/floor-server.js) on the vault's or the proxy vault's
 *             database, with the vault's or the proxy vault's ctx (bench/floor-scenarios.js); 'no-audit' to a
 *             production vault with AUDIT_ENABLED=false (the reference of auditing's cost). Default: the
 *             production-mode vault every other scenario uses.
 *   group     optional: BENCH_ONLY also matches it (e.g. 'proxy' for the proxy scenarios and their baselines)
 *   database  optional: 'postgres' for a scenario that needs ctx.cli (a second tenant, say): skipped, with a
 *             line saying so, on the embedded database
 *   preciseLatency  optional: true takes p50/p99/average from every response's own time (0.01 ms) instead of
 *             autocannon's whole-millisecond histogram
 *   tokensPerRequest  optional: tokens each request creates; the report adds tokens/s = req/s × this
 *   background  optional request definition, or (ctx, data) => definition, sent on backgroundConnections
 *             (default BENCH_CONNECTIONS) for the whole warm-up and measurement: the row measures `request`
 *             under that load; `background` in the results has its request count and status codes
 *   targets   optional [{ label, measure(row, byName) -> number | null, op: '>=' | '<=', threshold, unit? }]:
 *             checked after the run and listed as PASS/MISS (null: a scenario it needs did not run)
 *
 * ctx: { baseUrl, key (the management key), auth (BT-API-KEY header of the management key),
 *        api(method, path, body?, key?) -> parsed JSON (throws on a non-2xx answer),
 *        database ('PostgreSQL' or 'embedded'), cli(args) -> stdout of `node dist/src/cli.js ...args` on the
 *        server's database (PostgreSQL only),
 *        createApplication({ name, type, permissions, rules }) -> { id, key },
 *        cache (a Map shared by every scenario of the run), log(line) (progress output),
 *        record(name, value) (kept under `setup` in the scenario's results) }
 */
const { randomBytes } = require('node:crypto');
const { performance } = require('node:perf_hooks');
// The service's own implementation, from the build `npm run bench` makes first.
const { cardBody } = require('./card-body');

const { FLOOR_CONNECTIONS, NAMES } = require('./hot-path-names');
const { auditScenarios } = require('./audit-scenarios');
const { floorScenarios, randomGet } = require('./floor-scenarios');
const { p99Vs, requestsPerSecondVs } = require('./targets');
const { REACT_CODE, REACT_PARAMETERS } = require('./sandbox-code');

const { POST_TOKENS, GET_TOKEN, LIST_BY_METADATA, TOKENIZE_RUNS, REACT_16, REACT_1 } = NAMES;
const { PROXY_N, DIRECT_1, PROXY_1, GET_TOKEN_1 } = NAMES;
const POST_TOKENS_KEYED = 'POST /tokens (card, idempotency key)';
const POST_TOKENS_REPLAY = 'POST /tokens (idempotent replay)';
const GET_TOKEN_PKCS11 = 'GET /tokens/<id> (reveal, master key in SoftHSM2)';

const READ_TOKENS = 1000;
const SEED_TOKENS = 100_000;
/** Seconds to let the vault's own maintenance (statistics) catch up after seeding. */
const SETTLE_SECONDS = 12;
const SEED_BATCH = 100;
const SEED_CONCURRENCY = 4;
/** 100,000 tokens over 5,000 values: every value matches 20 tokens, one default page. */
const METADATA_VALUES = 5000;
const TOKENIZE_LEAVES = 100;

/** A private application that may create and read tokens in every container and sees them revealed. */
async function revealApplication(ctx) {
  if (!ctx.cache.has('revealApplication')) {
    ctx.cache.set(
      'revealApplication',
      ctx.createApplication({
        name: 'bench reveal',
        type: 'private',
        permissions: ['token:create', 'token:read'],
        rules: [
          {
            description: 'everything, revealed',
            priority: 1,
            container: '/',
            transform: 'reveal',
            permissions: ['token:create', 'token:read'],
          },
        ],
      }),
    );
  }
  return ctx.cache.get('revealApplication');
}

/** Distinct per run and per process, so repeated runs on one database never collide either. */
const RUN = randomBytes(3).toString('hex');
function jsonHeaders(key) {
  return { 'bt-api-key': key, 'content-type': 'application/json' };
}

/** Runs `count` jobs, at most `concurrency` at a time, in order of index. */
async function runPool(count, concurrency, job) {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next;
      next += 1;
      await job(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

const ratioVsBaseline = (row) => row.ratio_vs_baseline;

/** A warm reactor returning { raw: args }, one card token to detokenize, and a caller with token:use. */
async function reactSetup(ctx) {
  if (!ctx.cache.has('reactor')) {
    ctx.cache.set(
      'reactor',
      (async () => {
        const caller = await ctx.createApplication({
          name: 'bench react caller',
          type: 'private',
          permissions: ['token:create', 'token:use'],
          rules: [],
        });
        const card = await ctx.api('POST', '/tokens', cardBody(), caller.key);
        const formula = await ctx.api('POST', '/reactor-formulas', {
          name: 'bench echo',
          type: 'private',
          code: REACT_CODE,
          configuration: [],
          request_parameters: REACT_PARAMETERS,
        });
        const reactor = await ctx.api('POST', '/reactors', {
          name: 'bench echo',
          configuration: {},
          formula: { id: formula.id },
        });
        const path = `/reactors/${reactor.id}/react`;
        return { key: caller.key, path, card: card.id, tenantId: card.tenant_id };
      })(),
    );
  }
  return ctx.cache.get('reactor');
}

/** How long each of the flooding tenant's runs holds a sandbox worker (busy, on the worker's CPU). */
const SLOW_REACT_MS = 200;
/** The flooding tenant's connections: more than its share of workers and of queued runs together. */
const FLOOD_CONNECTIONS = 64;
const REACT_B_IDLE = 'POST /reactors/<id>/react (tenant B idle, 1 connection)';
const REACT_B_FLOODED = `POST /reactors/<id>/react (tenant B, 1 connection, tenant A flooding ${SLOW_REACT_MS} ms reactors)`;

/**
 * Tenant A of the fairness rows: a second tenant (made with the `tenant:create` operator command, which has no
 * API route), a reactor whose every run busy-waits SLOW_REACT_MS in the sandbox, and a caller allowed to run
 * it. Checks once that a run does take that long. Tenant B is the default tenant, with reactSetup's reactor.
 */
async function floodingTenantSetup(ctx) {
  if (!ctx.cache.has('floodingTenant')) {
    ctx.cache.set(
      'floodingTenant',
      (async () => {
        const output = await ctx.cli([
          'tenant:create',
          '--name',
          `bench flooding tenant ${RUN}`,
          '--owner-email',
          `bench-flood-${RUN}@token-vault.local`,
          '--json',
        ]);
        const tenant = JSON.parse(output.trim().split('\n').pop());
        const caller = await ctx.api(
          'POST',
          '/applications',
          { name: 'bench flood caller', type: 'private', permissions: ['token:use'], rules: [] },
          tenant.key,
        );
        const formula = await ctx.api(
          'POST',
          '/reactor-formulas',
          {
            name: 'bench slow',
            type: 'private',
            code:
              'module.exports = async function () { ' +
              `const end = Date.now() + ${SLOW_REACT_MS}; while (Date.now() < end) {} return { raw: { slow: true } }; };`,
            configuration: [],
            request_parameters: [],
          },
          tenant.key,
        );
        const reactor = await ctx.api(
          'POST',
          '/reactors',
          { name: 'bench slow', configuration: {}, formula: { id: formula.id } },
          tenant.key,
        );
        const path = `/reactors/${reactor.id}/react`;
        const started = performance.now();
        await ctx.api('POST', path, { args: {} }, caller.key);
        const ms = performance.now() - started;
        if (ms < SLOW_REACT_MS) {
          throw new Error(
            `tenant A's slow reactor answered in ${ms.toFixed(1)} ms, expected ≥ ${SLOW_REACT_MS} ms`,
          );
        }
        ctx.log(`tenant ${tenant.tenant_id} (A): one slow react takes ${ms.toFixed(1)} ms`);
        return { key: caller.key, path, tenant: tenant.tenant_id };
      })(),
    );
  }
  return ctx.cache.get('floodingTenant');
}

const PROXY_CONNECTIONS = FLOOR_CONNECTIONS;
const DIRECT_N = `direct HTTPS echo (${PROXY_CONNECTIONS} connections)`;
const PROXY_TOKENS = 2;

/**
 * On the proxy vault: a caller with token:create and token:use, two card tokens, and the two bodies: the one
 * sent to /proxy with three expressions (both numbers and the first card's expiry month: two token rows read,
 * as issue 39's floor reads), and the one sent straight to the echo server with the values in clear (what the
 * vault forwards). Checks once, before anything is measured, that the destination receives the real card
 * numbers through the proxy.
 */
async function proxySetup(ctx) {
  if (!ctx.cache.has('proxy')) {
    ctx.cache.set(
      'proxy',
      (async () => {
        const caller = await ctx.createApplication({
          name: 'bench proxy caller',
          type: 'private',
          permissions: ['token:create', 'token:use'],
          rules: [],
        });
        const cards = [];
        const ids = [];
        let tenantId = null;
        for (let i = 0; i < PROXY_TOKENS; i += 1) {
          const body = cardBody();
          const token = await ctx.api('POST', '/tokens', body, caller.key);
          cards.push(body.data);
          ids.push(token.id);
          tenantId = token.tenant_id;
        }
        const expected = {
          cards: cards.map((card) => card.number),
          month: cards[0].expiration_month,
          amount: 1000,
        };
        const proxiedBody = JSON.stringify({
          cards: ids.map((id) => `{{ ${id} | json: '$.number' }}`),
          month: `{{ ${ids[0]} | json: '$.expiration_month' }}`,
          amount: 1000,
        });
        const directBody = JSON.stringify(expected);
        const headers = {
          'bt-api-key': caller.key,
          'bt-proxy-url': ctx.echo.proxyUrl,
          'content-type': 'application/json',
        };
        const response = await fetch(`${ctx.baseUrl}/proxy/charge`, {
          method: 'POST',
          headers,
          body: proxiedBody,
        });
        const text = await response.text();
        let echoed = null;
        try {
          echoed = JSON.parse(text);
        } catch {
          // reported below
        }
        if (
          response.status !== 200 ||
          echoed?.path !== '/charge' ||
          JSON.stringify(echoed?.body) !== JSON.stringify(expected)
        ) {
          throw new Error(
            `POST /proxy/charge to ${ctx.echo.proxyUrl} did not deliver the card numbers: expected the echo of ` +
              `${JSON.stringify(expected)} at /charge, got ${response.status} ${text.slice(0, 1000)}`,
          );
        }
        if (echoed.bytes !== Buffer.byteLength(directBody)) {
          ctx.log(
            `note: the destination received ${echoed.bytes} bytes through the proxy, the direct body has ` +
              `${Buffer.byteLength(directBody)}`,
          );
        }
        ctx.log(
          `checked: ${ctx.echo.proxyUrl}/charge received the ${PROXY_TOKENS} card numbers (${echoed.bytes} bytes; ` +
            `${Buffer.byteLength(proxiedBody)} bytes sent to /proxy)`,
        );
        return { headers, proxiedBody, directBody, ids, tenantId };
      })(),
    );
  }
  return ctx.cache.get('proxy');
}

function directEchoRequest(ctx, data) {
  return {
    method: 'POST',
    path: '/charge',
    headers: { 'content-type': 'application/json' },
    body: data.directBody,
  };
}

function proxyRequest(ctx, data) {
  return { method: 'POST', path: '/proxy/charge', headers: data.headers, body: data.proxiedBody };
}

function reactRequest(ctx, data) {
  return {
    method: 'POST',
    path: data.path,
    headers: jsonHeaders(data.key),
    body: JSON.stringify({ args: { card: `{{ ${data.card} }}` } }),
  };
}

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

/** POST /tokens creating a card: POST_TOKENS. */
const postTokens = {
  name: POST_TOKENS,
  // BENCH_ONLY=idempotency: this row and the two keyed ones, whose reference it is; BENCH_ONLY=floors: this
  // row and its floors (issue 39), at the floor comparisons' concurrency.
  group: 'idempotency floors',
  connections: FLOOR_CONNECTIONS,
  setup: revealApplication,
  request: cardRequest,
  targets: [{ label: 'req/s vs GET /health', measure: ratioVsBaseline, op: '>=', threshold: 0.4 }],
};

const FLOORS = floorScenarios({
  revealApplication,
  cardRequest,
  revealTokens,
  proxySetup,
  listTokens,
  listRequest,
  reactSetup,
  reactRequest,
});

/** GET /tokens/<id> revealing a card, over READ_TOKENS tokens: GET_TOKEN, and the same on the pkcs11 vault. */
const getToken = {
  name: GET_TOKEN,
  group: 'floors pkcs11',
  connections: FLOOR_CONNECTIONS,
  setup: revealTokens,
  request: (ctx, { key, ids }) => ({
    requests: [
      {
        method: 'GET',
        headers: { 'bt-api-key': key },
        setupRequest: (req) => ({ ...req, path: `/tokens/${ids[Math.floor(Math.random() * ids.length)]}` }),
      },
    ],
  }),
  targets: [{ label: 'req/s vs GET /health', measure: ratioVsBaseline, op: '>=', threshold: 0.6 }],
};

module.exports = [
  {
    name: 'GET /health',
    baseline: true,
    request: { method: 'GET', path: '/health' },
  },
  {
    name: 'GET /applications/key',
    request: (ctx) => ({ method: 'GET', path: '/applications/key', headers: ctx.auth }),
  },
  postTokens,
  FLOORS.create,
  FLOORS.nestCreate,
  {
    // Issue 17: what BT-IDEMPOTENCY-KEY costs. POST_TOKENS with a new key on every request: each one claims
    // its key in the database and stores its sealed answer. Target: at most 10 % slower than without a key.
    // Also in BENCH_ONLY=floors: issue 39's table shows it beside the unkeyed create, against the same floor.
    name: POST_TOKENS_KEYED,
    group: 'idempotency floors',
    connections: FLOOR_CONNECTIONS,
    setup: idempotencySetup,
    request: (ctx, { key }) => {
      let counter = 0;
      return {
        requests: [
          {
            method: 'POST',
            path: '/tokens',
            headers: jsonHeaders(key),
            setupRequest: (req) => {
              counter += 1;
              return {
                ...req,
                headers: { ...req.headers, 'bt-idempotency-key': `bench-${RUN}-${counter}` },
                body: JSON.stringify(cardBody()),
              };
            },
          },
        ],
      };
    },
    targets: [requestsPerSecondVs(POST_TOKENS, 0.9)],
  },
  {
    // Clients' retries after lost answers: each request resends the key and body of one of REPLAY_KEYS
    // earlier requests, picked at random, and gets the stored answer (checked by the setup). No token is
    // created; the ratio says what a retry costs next to a new token. (Keys are spread: 16 connections
    // replaying one single key would queue on that key's row lock and measure that instead.)
    name: POST_TOKENS_REPLAY,
    group: 'idempotency',
    connections: FLOOR_CONNECTIONS,
    setup: idempotencySetup,
    request: (ctx, { key, replays }) => ({
      requests: [
        {
          method: 'POST',
          path: '/tokens',
          headers: jsonHeaders(key),
          setupRequest: (req) => {
            const replay = replays[Math.floor(Math.random() * replays.length)];
            return {
              ...req,
              headers: { ...req.headers, 'bt-idempotency-key': replay.key },
              body: replay.body,
            };
          },
        },
      ],
    }),
    targets: [requestsPerSecondVs(POST_TOKENS, 0.9)],
  },
  getToken,
  {
    // The same reads on a vault whose master key is in an HSM (bench/pkcs11-vault.js).
    ...getToken,
    name: GET_TOKEN_PKCS11,
    group: 'pkcs11',
    server: 'pkcs11',
    targets: [requestsPerSecondVs(GET_TOKEN, 0.9)],
  },
  FLOORS.reveal,
  FLOORS.nestReveal,
  // Issue 39: the reveal's p50 at 1 connection against its floor's (bench/hot-paths.js).
  { ...getToken, name: GET_TOKEN_1, group: 'floors', connections: 1, preciseLatency: true, targets: [] },
  FLOORS.revealAlone,
  FLOORS.nestRevealAlone,
  // Issue 15: auditing's cost, in alternating rounds on the vault and on one with AUDIT_ENABLED=false.
  ...auditScenarios({ postTokens, getToken }),
  // Issue 39 compares the median of three runs (it swings between runs) to POST_TOKENS (bench/hot-paths.js).
  ...TOKENIZE_RUNS.map(tokenizeRun),
  {
    // Last: the 100,000 seeded tokens would otherwise make every later scenario run on a bigger table.
    // Issue 39 compares its p99 to GET_TOKEN's (bench/hot-paths.js).
    name: LIST_BY_METADATA,
    group: 'floors',
    connections: FLOOR_CONNECTIONS,
    setup: listTokens,
    request: listRequest,
  },
  // Issue 39: the list figure's bound, on the same seeded tokens (bench/list-floor.js).
  FLOORS.list,
  {
    // Issue 39: req/s vs GET /health (bench/hot-paths.js).
    name: REACT_16,
    group: 'floors',
    connections: 16,
    setup: reactSetup,
    request: reactRequest,
  },
  {
    // Issue 39: p50 at 1 connection less the audited read floor's (bench/hot-paths.js).
    name: REACT_1,
    group: 'floors',
    connections: 1,
    preciseLatency: true,
    setup: reactSetup,
    request: reactRequest,
  },
  // Issue 39: the react figures' bound (bench/react-floor.js), at 16 connections and at 1.
  FLOORS.react,
  FLOORS.reactAlone,
  {
    // Issue 17, sandbox fairness: the reference for the next row, tenant B's warm react alone (REACT_1 with
    // latency from every response's own time).
    name: REACT_B_IDLE,
    group: 'fairness',
    connections: 1,
    preciseLatency: true,
    setup: reactSetup,
    request: reactRequest,
  },
  {
    // The same requests while tenant A sends its slow reactor on FLOOD_CONNECTIONS connections: A may hold
    // only its share of the sandbox workers and of the queue (SANDBOX_TENANT_RUNNING, SANDBOX_TENANT_QUEUE),
    // so its excess answers 429 (or 503): `background` lists A's status codes. A's clients wait Retry-After
    // before sending a refused run again, as the official SDKs do: what is measured is the sandbox's sharing,
    // not how fast one process can refuse a client that ignores Retry-After (the rate limits' job).
    // Target: B's p99 within 2× idle.
    name: REACT_B_FLOODED,
    group: 'fairness',
    database: 'postgres',
    connections: 1,
    preciseLatency: true,
    async setup(ctx) {
      return { b: await reactSetup(ctx), a: await floodingTenantSetup(ctx) };
    },
    request: (ctx, { b }) => reactRequest(ctx, b),
    background: (ctx, { a }) => ({
      method: 'POST',
      path: a.path,
      headers: jsonHeaders(a.key),
      body: JSON.stringify({ args: {} }),
    }),
    backgroundConnections: FLOOD_CONNECTIONS,
    backgroundHonoursRetryAfter: true,
    targets: [p99Vs(REACT_B_IDLE, 2)],
  },
  {
    // The reference for the /proxy rows: the same destination, body size and concurrency, without the vault.
    name: DIRECT_N,
    group: 'proxy',
    server: 'echo',
    connections: PROXY_CONNECTIONS,
    preciseLatency: true,
    setup: proxySetup,
    request: directEchoRequest,
  },
  {
    // Issue 39 compares it to its floor, the next row (bench/hot-paths.js); the direct call above is shown for
    // reference only (no server that reads rows and forwards a call gets near it here).
    name: PROXY_N,
    group: 'proxy floors',
    server: 'proxy',
    connections: PROXY_CONNECTIONS,
    preciseLatency: true,
    setup: proxySetup,
    request: proxyRequest,
  },
  FLOORS.proxy,
  FLOORS.nestProxy,
  {
    name: DIRECT_1,
    group: 'proxy',
    server: 'echo',
    connections: 1,
    preciseLatency: true,
    setup: proxySetup,
    request: directEchoRequest,
  },
  {
    // Issue 39: p50 less its floor's, the row after (bench/hot-paths.js).
    name: PROXY_1,
    group: 'proxy floors',
    server: 'proxy',
    connections: 1,
    preciseLatency: true,
    setup: proxySetup,
    request: proxyRequest,
  },
  FLOORS.proxyAlone,
  ...require('./hostile-scenarios'),
  // Last: a million tokens on one tenant (PostgreSQL only).
  ...require('./deep-page-scenarios'),
];
