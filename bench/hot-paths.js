'use strict';
/**
 * Issue 22's hot-path figures, each a ratio to a baseline measured in the same run (the floors are bench/
 * floor-server.js: a bare node:http server doing only the unavoidable work, on the same database with the same
 * pool size). `npm run bench` prints them as a table of their own at the end and writes them to
 * bench/results/latest.json (`hot_paths`); `BENCH_ONLY=floors` runs just the scenarios they need.
 */

/** Concurrency of the floor comparisons, on both sides (the figures were taken at 16 connections). */
const FLOOR_CONNECTIONS = 16;

/** Scenario names the figures read (bench/scenarios.js defines the scenarios). */
const NAMES = {
  POST_TOKENS: 'POST /tokens (card)',
  FLOOR_CREATE: 'floor: node:http + one pg INSERT',
  GET_TOKEN: 'GET /tokens/<id> (reveal)',
  FLOOR_REVEAL: 'floor: node:http + one primary-key SELECT',
  PROXY_N: `POST /proxy (3 tokens, ${FLOOR_CONNECTIONS} connections)`,
  FLOOR_PROXY: 'floor: node:http + SELECT of 3 rows + keep-alive HTTPS POST',
  DIRECT_1: 'direct HTTPS echo (1 connection)',
  PROXY_1: 'POST /proxy (3 tokens, 1 connection)',
  LIST_BY_METADATA: 'GET /tokens?metadata.k=v',
  TOKENIZE_RUNS: [1, 2, 3].map((n) => `POST /tokenize (100 leaves, run ${n} of 3)`),
  HEALTH: 'GET /health',
  REACT_16: 'POST /reactors/<id>/react (1 card, 16 connections)',
  REACT_1: 'POST /reactors/<id>/react (1 card, 1 connection)',
};

/** A row's figure, or null when it did not run or more than 1 % of its answers were not 2xx (nothing to compare). */
const field = (byName, name, key) => {
  const row = byName[name];
  if (row === undefined || !(row.requests > 0) || (row.non_2xx + row.errors) / row.requests > 0.01) {
    return null;
  }
  const value = row[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
};
const ratio = (a, b) => (a === null || b === null || !(b > 0) ? null : a / b);
const rps = (byName, name) => field(byName, name, 'requests_per_second');

function median(values) {
  if (values.length === 0) {
    return null;
  }
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The figures, in the order: measure(byName) -> number | null (null: a scenario it needs did not run). */
const FIGURES = [
  {
    figure: 'POST /tokens (card) ÷ floor: node:http + one pg INSERT (req/s)',
    measure: (b) => ratio(rps(b, NAMES.POST_TOKENS), rps(b, NAMES.FLOOR_CREATE)),
    op: '>=',
    threshold: 0.6,
  },
  {
    figure: 'GET /tokens/<id> reveal ÷ floor: node:http + one primary-key SELECT (req/s)',
    measure: (b) => ratio(rps(b, NAMES.GET_TOKEN), rps(b, NAMES.FLOOR_REVEAL)),
    op: '>=',
    threshold: 0.7,
  },
  {
    figure: 'POST /proxy, 3 expressions ÷ floor: node:http + one SELECT + keep-alive HTTPS POST (req/s)',
    measure: (b) => ratio(rps(b, NAMES.PROXY_N), rps(b, NAMES.FLOOR_PROXY)),
    op: '>=',
    threshold: 0.6,
  },
  {
    figure: "proxy's added p50 at 1 connection (proxied − direct)",
    measure: (b) => {
      const proxied = field(b, NAMES.PROXY_1, 'latency_p50_ms');
      const direct = field(b, NAMES.DIRECT_1, 'latency_p50_ms');
      return proxied === null || direct === null ? null : proxied - direct;
    },
    op: '<=',
    threshold: 1,
    unit: ' ms',
  },
  {
    figure: 'list by metadata at 100 k tokens: p99 ÷ reveal p99',
    measure: (b) =>
      ratio(field(b, NAMES.LIST_BY_METADATA, 'latency_p99_ms'), field(b, NAMES.GET_TOKEN, 'latency_p99_ms')),
    op: '<=',
    threshold: 2,
  },
  {
    figure: 'tokenize 100 leaves: tokens/s (median of 3 runs) ÷ single-create req/s',
    measure: (b) =>
      ratio(
        median(
          NAMES.TOKENIZE_RUNS.map((name) => field(b, name, 'tokens_per_second')).filter((v) => v !== null),
        ),
        rps(b, NAMES.POST_TOKENS),
      ),
    op: '>=',
    threshold: 15,
  },
  {
    figure: 'warm react ÷ GET /health (req/s, 16 connections)',
    measure: (b) => ratio(rps(b, NAMES.REACT_16), rps(b, NAMES.HEALTH)),
    op: '>=',
    threshold: 0.1,
  },
  {
    figure: 'react p50 at 1 connection',
    measure: (b) => field(b, NAMES.REACT_1, 'latency_p50_ms'),
    op: '<=',
    threshold: 2,
    unit: ' ms',
  },
];

const round = (value) => Math.round(value * 1000) / 1000;

/** The figures measured on this run's rows: [{ figure, measured, op, threshold, unit, pass }]. */
function hotPaths(rows) {
  const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
  return FIGURES.map(({ figure, measure, op, threshold, unit = '' }) => {
    const raw = measure(byName);
    const measured = raw === null ? null : round(raw);
    const pass = measured === null ? null : op === '>=' ? measured >= threshold : measured <= threshold;
    return { figure, measured, op, threshold, unit, pass };
  });
}

/** The figures as a table: figure | measured | target | PASS/MISS. */
function hotPathLines(figures) {
  const cells = figures.map((f) => [
    f.figure,
    f.measured === null ? '-' : `${f.measured}${f.unit}`,
    `${f.op === '>=' ? '≥' : '≤'} ${f.threshold}${f.unit}`,
    f.pass === null ? 'n/a (not run)' : f.pass ? 'PASS' : 'MISS',
  ]);
  return textTable(['figure', 'measured', 'target', 'verdict'], cells);
}

/** Rows of text cells under `header`, indented, the first column left-aligned and the others right. */
function textTable(header, cells) {
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((c) => c[i].length)));
  const line = (values) =>
    `  ${values.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ')}`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** The routes measured against a floor, with the floor each is compared to. */
const FLOOR_PAIRS = [
  ['POST /tokens (card)', NAMES.POST_TOKENS, NAMES.FLOOR_CREATE],
  ['GET /tokens/<id> (reveal)', NAMES.GET_TOKEN, NAMES.FLOOR_REVEAL],
  ['POST /proxy (3 tokens)', NAMES.PROXY_N, NAMES.FLOOR_PROXY],
];

/**
 * Where each floor comparison's CPU goes, per request: the server's and PostgreSQL's (bench/database-cpu.js).
 * The server, the database and the load share the machine's cores, so when they are all busy the req/s ratio
 * cannot pass floor CPU ÷ route CPU however the route's own code is written. Rows lacking a figure are left
 * out; null when none is left.
 */
function floorCpuLines(rows) {
  const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
  const cpu = (name) => {
    const server = field(byName, name, 'server_cpu_ms_per_request');
    const database = field(byName, name, 'database_cpu_ms_per_request');
    return server === null || database === null ? null : { server, database, total: server + database };
  };
  const cells = FLOOR_PAIRS.map(([label, route, floor]) => [label, cpu(route), cpu(floor)])
    .filter(([, route, floor]) => route !== null && floor !== null)
    .map(([label, route, floor]) => [
      label,
      route.server.toFixed(3),
      route.database.toFixed(3),
      floor.server.toFixed(3),
      floor.database.toFixed(3),
      (floor.total / route.total).toFixed(3),
    ]);
  if (cells.length === 0) {
    return null;
  }
  return textTable(['route', 'server', 'database', 'floor server', 'floor database', 'floor ÷ route'], cells);
}

module.exports = { FLOOR_CONNECTIONS, NAMES, floorCpuLines, hotPaths, hotPathLines, median };
