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
 *   server    optional: 'proxy' runs the scenario on a second vault that may reach the bench HTTPS echo server
 *             (bench/echo-server.js, bench/proxy-vault.js); its ctx also has `echo` ({ hostUrl, directUrl });
 *             a request definition with an absolute `url` goes to that URL instead of the vault
 *   tokensPerRequest  optional: tokens each request creates; the report adds tokens/s = req/s × this
 *   targets   optional [{ label, measure(row, byName) -> number | null, op: '>=' | '<=', threshold, unit? }]:
 *             checked after the run and listed as PASS/MISS (null: a scenario it needs did not run)
 *
 * ctx: { baseUrl, key (the management key), auth (BT-API-KEY header of the management key),
 *        api(method, path, body?, key?) -> parsed JSON (throws on a non-2xx answer),
 *        createApplication({ name, type, permissions, rules }) -> { id, key },
 *        cache (a Map shared by every scenario of the run), log(line) (progress output),
 *        record(name, value) (kept under `setup` in the scenario's results) }
 */
const { randomBytes } = require('node:crypto');
// The service's own implementation, from the build `npm run bench` makes first.
const { luhnCheckDigit } = require('../dist/src/common/luhn');

const POST_TOKENS = 'POST /tokens (card)';
const GET_TOKEN = 'GET /tokens/<id> (reveal)';
const LIST_BY_METADATA = 'GET /tokens?metadata.k=v';
const TOKENIZE = 'POST /tokenize (100 leaves)';

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
let cardCounter = 0;

/** A 16-digit Visa-like number with a correct Luhn check digit, different on every call. */
function nextCardNumber() {
  cardCounter += 1;
  const payload = `4${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}${String(cardCounter % 1e8).padStart(8, '0')}`;
  return payload + luhnCheckDigit(payload);
}

function cardBody() {
  return {
    type: 'card',
    data: { number: nextCardNumber(), expiration_month: 12, expiration_year: 2030 },
    metadata: { k: 'v' },
  };
}

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

const REACT_16 = 'POST /reactors/<id>/react (1 card, 16 connections)';
const REACT_1 = 'POST /reactors/<id>/react (1 card, 1 connection)';

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
          code: 'module.exports = async function (req) { return { raw: req.args }; };',
          configuration: [],
          request_parameters: [{ name: 'card.number', type: 'string' }],
        });
        const reactor = await ctx.api('POST', '/reactors', {
          name: 'bench echo',
          configuration: {},
          formula: { id: formula.id },
        });
        return { key: caller.key, path: `/reactors/${reactor.id}/react`, card: card.id };
      })(),
    );
  }
  return ctx.cache.get('reactor');
}

function reactRequest(ctx, data) {
  return {
    method: 'POST',
    path: data.path,
    headers: jsonHeaders(data.key),
    body: JSON.stringify({ args: { card: `{{ ${data.card} }}` } }),
  };
}

const PROXY_20 = 'POST /proxy (3 tokens, 20 connections)';
const DIRECT_20 = 'proxy baseline: direct HTTPS echo (20 connections)';
const PROXY_1 = 'POST /proxy (3 tokens, 1 connection)';
const DIRECT_1 = 'proxy baseline: direct HTTPS echo (1 connection)';
const PROXY_CONNECTIONS = 20;

/**
 * Three card tokens, a caller with token:use, and the body the proxy sends on: run once against the proxy to
 * check that the echo server receives the card numbers in clear. `ctx.echo` is the bench echo server.
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
        });
        const cards = [];
        for (let i = 0; i < 3; i += 1) {
          const body = cardBody();
          const card = await ctx.api('POST', '/tokens', body, caller.key);
          cards.push({ id: card.id, number: body.data.number });
        }
        const templated = JSON.stringify({
          cards: cards.map((c) => `{{ ${c.id} | json: '$.number' }}`),
          amount: 1000,
        });
        const clear = JSON.stringify({ cards: cards.map((c) => c.number), amount: 1000 });
        const check = await fetch(`${ctx.baseUrl}/proxy/charge`, {
          method: 'POST',
          headers: { ...jsonHeaders(caller.key), 'bt-proxy-url': ctx.echo.hostUrl },
          body: templated,
        });
        const echoed = await check.json();
        if (check.status !== 200 || echoed.received !== clear) {
          throw new Error(`${PROXY_20}: the echo server did not receive the card numbers: ${check.status}`);
        }
        return { key: caller.key, templated, clear };
      })(),
    );
  }
  return ctx.cache.get('proxy');
}

const proxyRequest = (ctx, data) => ({
  method: 'POST',
  path: '/proxy/charge',
  headers: { ...jsonHeaders(data.key), 'bt-proxy-url': ctx.echo.hostUrl },
  body: data.templated,
});

const directRequest = (ctx, data) => ({
  url: `${ctx.echo.directUrl}/charge`,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: data.clear,
});

const versus = (other, measure) => (row, byName) => (byName[other] ? measure(row, byName[other]) : null);

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
  {
    name: POST_TOKENS,
    setup: revealApplication,
    request: (ctx, app) => ({
      requests: [
        {
          method: 'POST',
          path: '/tokens',
          headers: jsonHeaders(app.key),
          setupRequest: (req) => ({ ...req, body: JSON.stringify(cardBody()) }),
        },
      ],
    }),
    targets: [{ label: 'req/s vs GET /health', measure: ratioVsBaseline, op: '>=', threshold: 0.4 }],
  },
  {
    name: GET_TOKEN,
    async setup(ctx) {
      const app = await revealApplication(ctx);
      const ids = [];
      for (let created = 0; created < READ_TOKENS; created += SEED_BATCH) {
        const tokens = await ctx.api(
          'POST',
          '/tokenize',
          Array.from({ length: SEED_BATCH }, cardBody),
          app.key,
        );
        ids.push(...tokens.map((t) => t.id));
      }
      const sample = await ctx.api('GET', `/tokens/${ids[0]}`, undefined, app.key);
      if (!/^\d{16}$/.test(sample?.data?.number ?? '')) {
        throw new Error(
          `${GET_TOKEN}: expected the card number revealed, got ${JSON.stringify(sample?.data)}`,
        );
      }
      return { key: app.key, ids };
    },
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
  },
  {
    name: TOKENIZE,
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
              const leaves = Array.from({ length: TOKENIZE_LEAVES }, (_, i) => `leaf-${RUN}-${counter}-${i}`);
              return { ...req, body: JSON.stringify(leaves) };
            },
          },
        ],
      };
    },
    tokensPerRequest: TOKENIZE_LEAVES,
    targets: [
      {
        label: `tokens/s vs ${POST_TOKENS} req/s`,
        measure: (row, byName) =>
          byName[POST_TOKENS] && byName[POST_TOKENS].requests_per_second > 0
            ? row.tokens_per_second / byName[POST_TOKENS].requests_per_second
            : null,
        op: '>=',
        threshold: 10,
        unit: '×',
      },
    ],
  },
  {
    // Last: the 100,000 seeded tokens would otherwise make every later scenario run on a bigger table.
    name: LIST_BY_METADATA,
    async setup(ctx) {
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
      return app;
    },
    request: (ctx, app) => ({
      requests: [
        {
          method: 'GET',
          headers: { 'bt-api-key': app.key },
          setupRequest: (req) => ({
            ...req,
            path: `/tokens?metadata.k=v${Math.floor(Math.random() * METADATA_VALUES)}`,
          }),
        },
      ],
    }),
    targets: [
      {
        label: `p99 vs ${GET_TOKEN} p99`,
        measure: (row, byName) =>
          byName[GET_TOKEN] && byName[GET_TOKEN].latency_p99_ms > 0
            ? row.latency_p99_ms / byName[GET_TOKEN].latency_p99_ms
            : null,
        op: '<=',
        threshold: 3,
        unit: '×',
      },
    ],
  },
  {
    name: REACT_16,
    connections: 16,
    setup: reactSetup,
    request: reactRequest,
    targets: [{ label: 'req/s vs GET /health', measure: ratioVsBaseline, op: '>=', threshold: 0.1 }],
  },
  {
    name: REACT_1,
    connections: 1,
    setup: reactSetup,
    request: reactRequest,
    targets: [
      {
        label: 'p50 at 1 connection',
        measure: (row) => row.latency_p50_ms,
        op: '<=',
        threshold: 5,
        unit: 'ms',
      },
    ],
  },
  {
    name: DIRECT_20,
    server: 'proxy',
    connections: PROXY_CONNECTIONS,
    setup: proxySetup,
    request: directRequest,
  },
  {
    name: PROXY_20,
    server: 'proxy',
    connections: PROXY_CONNECTIONS,
    setup: proxySetup,
    request: proxyRequest,
    targets: [
      {
        label: `req/s vs ${DIRECT_20}`,
        measure: versus(DIRECT_20, (row, direct) => row.requests_per_second / direct.requests_per_second),
        op: '>=',
        threshold: 0.5,
      },
    ],
  },
  {
    name: DIRECT_1,
    server: 'proxy',
    connections: 1,
    setup: proxySetup,
    request: directRequest,
  },
  {
    name: PROXY_1,
    server: 'proxy',
    connections: 1,
    setup: proxySetup,
    request: proxyRequest,
    targets: [
      {
        label: `p50 added to ${DIRECT_1}`,
        measure: versus(DIRECT_1, (row, direct) => row.latency_p50_ms - direct.latency_p50_ms),
        op: '<=',
        threshold: 2,
        unit: 'ms',
      },
    ],
  },
];
