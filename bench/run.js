'use strict';
/**
 * `npm run bench`: starts the built service on a throw-away database and measures each scenario of
 * bench/scenarios.js with autocannon, reporting throughput as a ratio of the GET /health baseline measured
 * in the same run (absolute numbers depend on the machine; ratios travel).
 *
 * Environment:
 *   BENCH_DURATION       seconds measured per scenario (10)
 *   BENCH_WARMUP         seconds of unmeasured warm-up before each scenario (2)
 *   BENCH_CONNECTIONS    concurrent connections (20)
 *   BENCH_ONLY           run only the scenarios whose name contains this text (the baseline always runs)
 *   BENCH_DATABASE_URL   PostgreSQL server to run on (a new database is created and dropped); default:
 *                        the embedded database in a temporary folder
 * Results are also written to bench/results/latest.json.
 */
const autocannon = require('autocannon');
const { execFileSync } = require('node:child_process');
const { mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const scenarios = require('./scenarios');
const { startServer } = require('./server');

const RESULTS_FILE = join(__dirname, 'results', 'latest.json');

function positiveNumber(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') {
    return fallback;
  }
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  }
  return value;
}

function settings() {
  return {
    duration: positiveNumber('BENCH_DURATION', 10),
    warmup: positiveNumber('BENCH_WARMUP', 2),
    connections: Math.max(1, Math.round(positiveNumber('BENCH_CONNECTIONS', 20))),
    only: process.env.BENCH_ONLY?.trim() || null,
    postgresUrl: process.env.BENCH_DATABASE_URL?.trim() || null,
  };
}

/** What scenarios get to prepare data: the management key and a small JSON client for the API. */
function scenarioContext(server) {
  const auth = { 'bt-api-key': server.key };
  const api = async (method, path, body, key = server.key) => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { 'bt-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    if (!response.ok) {
      throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
    }
    return text === '' ? null : JSON.parse(text);
  };
  return {
    baseUrl: server.baseUrl,
    key: server.key,
    auth,
    api,
    async createApplication({ name = 'bench', type, permissions = [], rules = [] }) {
      const created = await api('POST', '/applications', { name, type, permissions, rules });
      return { id: created.id, key: created.key };
    },
  };
}

/** autocannon options for a scenario's request definition. */
function autocannonOptions(baseUrl, definition) {
  const encode = (request) => {
    if (request.body === undefined || typeof request.body === 'string' || Buffer.isBuffer(request.body)) {
      return request;
    }
    return {
      ...request,
      body: JSON.stringify(request.body),
      headers: { 'content-type': 'application/json', ...request.headers },
    };
  };
  if (Array.isArray(definition.requests)) {
    const { requests, ...shared } = definition;
    return { ...encode(shared), url: baseUrl, requests: requests.map(encode) };
  }
  const { path = '/', ...rest } = encode(definition);
  return { ...rest, url: `${baseUrl}${path}` };
}

async function measure(options, duration, connections) {
  return autocannon({ ...options, duration, connections });
}

function summarize(name, result) {
  const requestsPerSecond = result.duration > 0 ? result.requests.total / result.duration : 0;
  return {
    name,
    requests_per_second: round(requestsPerSecond, 1),
    latency_p50_ms: round(result.latency.p50, 2),
    latency_p99_ms: round(result.latency.p99, 2),
    latency_avg_ms: round(result.latency.average, 2),
    requests: result.requests.total,
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    status_codes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]),
    ),
    ratio_vs_baseline: null,
  };
}

function round(value, digits) {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

const COLUMNS = [
  ['scenario', (r) => r.name, 'left'],
  ['req/s', (r) => r.requests_per_second.toFixed(1)],
  ['p50 ms', (r) => String(r.latency_p50_ms)],
  ['p99 ms', (r) => String(r.latency_p99_ms)],
  ['non-2xx', (r) => String(r.non_2xx)],
  ['errors', (r) => String(r.errors)],
  ['vs /health', (r) => (r.ratio_vs_baseline === null ? '-' : r.ratio_vs_baseline.toFixed(3))],
];

function table(rows) {
  const cells = rows.map((row) => COLUMNS.map(([, get]) => get(row)));
  const widths = COLUMNS.map(([title], i) => Math.max(title.length, ...cells.map((c) => c[i].length)));
  const line = (values) =>
    values.map((v, i) => (COLUMNS[i][2] === 'left' ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  return [
    line(COLUMNS.map(([title]) => title)),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.map(line),
  ]
    .map((l) => `  ${l}`)
    .join('\n');
}

function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: __dirname,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

async function main() {
  const config = settings();
  const baseline = scenarios.find((s) => s.baseline === true);
  if (baseline === undefined) {
    throw new Error('bench/scenarios.js needs one scenario with baseline: true');
  }
  // The baseline runs first so that every later scenario has its ratio.
  const selected = [
    baseline,
    ...scenarios.filter((s) => s !== baseline && (config.only === null || s.name.includes(config.only))),
  ];

  let server = null;
  const stopOnSignal = (signal) => {
    process.stderr.write(`\n${signal}: stopping the server\n`);
    const stopping = server !== null ? server.stop() : Promise.resolve();
    void stopping.finally(() => process.exit(130));
  };
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  process.once('exit', () => server?.killNow());

  const startedAt = new Date();
  server = await startServer({ postgresUrl: config.postgresUrl });
  const rows = [];
  try {
    console.log(
      `Token Vault benchmark: ${server.database} database, node ${process.version}, ${config.connections} connections, ` +
        `${config.duration} s per scenario after ${config.warmup} s of warm-up\n`,
    );
    const ctx = scenarioContext(server);
    for (const scenario of selected) {
      const data = scenario.setup ? await scenario.setup(ctx) : undefined;
      const definition =
        typeof scenario.request === 'function' ? scenario.request(ctx, data) : scenario.request;
      const options = autocannonOptions(server.baseUrl, definition);
      if (config.warmup > 0) {
        await measure(options, config.warmup, config.connections);
      }
      const row = summarize(scenario.name, await measure(options, config.duration, config.connections));
      const reference = rows[0] ?? row;
      row.ratio_vs_baseline =
        reference.requests_per_second > 0
          ? round(row.requests_per_second / reference.requests_per_second, 3)
          : null;
      rows.push(row);
      console.log(`${scenario.name}\n${table([row])}\n`);
      if (row.non_2xx > 0 || row.errors > 0) {
        console.log(
          `  warning: status codes ${JSON.stringify(row.status_codes)}, ${row.errors} connection errors\n`,
        );
      }
    }
  } finally {
    await server.stop();
  }

  console.log(`Summary (throughput relative to ${baseline.name})\n${table(rows)}\n`);
  mkdirSync(join(__dirname, 'results'), { recursive: true });
  const report = {
    started_at: startedAt.toISOString(),
    commit: gitCommit(),
    node: process.version,
    database: server.database,
    duration_s: config.duration,
    warmup_s: config.warmup,
    connections: config.connections,
    baseline: baseline.name,
    scenarios: rows,
  };
  writeFileSync(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`Results written to ${RESULTS_FILE}`);
}

main().catch((err) => {
  process.stderr.write(`Benchmark failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
