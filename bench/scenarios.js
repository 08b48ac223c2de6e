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
const { FLOOR_CONNECTIONS, NAMES } = require('./hot-path-names');
const { auditScenarios } = require('./audit-scenarios');
const { floorScenarios } = require('./floor-scenarios');
const { p99Vs, requestsPerSecondVs } = require('./targets');
const { cardBody } = require('./card-body');
const { RUN, jsonHeaders, revealApplication } = require('./scenario-support');
const {
  idempotencySetup,
  cardRequest,
  revealTokens,
  listTokens,
  listRequest,
  tokenizeRun,
} = require('./token-setups');
const {
  reactSetup,
  reactRequest,
  floodingTenantSetup,
  FLOOD_CONNECTIONS,
  REACT_B_IDLE,
  REACT_B_FLOODED,
} = require('./react-setups');
const {
  proxySetup,
  directEchoRequest,
  proxyRequest,
  PROXY_CONNECTIONS,
  DIRECT_N,
} = require('./proxy-setups');

const { POST_TOKENS, GET_TOKEN, LIST_BY_METADATA, TOKENIZE_RUNS, REACT_16, REACT_1 } = NAMES;
const { PROXY_N, DIRECT_1, PROXY_1, GET_TOKEN_1 } = NAMES;
const POST_TOKENS_KEYED = 'POST /tokens (card, idempotency key)';
const POST_TOKENS_REPLAY = 'POST /tokens (idempotent replay)';
const GET_TOKEN_PKCS11 = 'GET /tokens/<id> (reveal, master key in SoftHSM2)';

const ratioVsBaseline = (row) => row.ratio_vs_baseline;

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
