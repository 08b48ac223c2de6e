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
  FLOOR_PROXY_1: 'floor: node:http + SELECT of 3 rows + keep-alive HTTPS POST (1 connection)',
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

/** p50 of `name` less the direct HTTPS call's, both at 1 connection. */
function addedP50(byName, name) {
  const proxied = field(byName, name, 'latency_p50_ms');
  const direct = field(byName, NAMES.DIRECT_1, 'latency_p50_ms');
  return proxied === null || direct === null ? null : proxied - direct;
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
    measure: (b) => addedP50(b, NAMES.PROXY_1),
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

/** The routes measured against a floor, with the floor each is compared to and its target (FIGURES). */
const FLOOR_PAIRS = [
  ['POST /tokens (card)', NAMES.POST_TOKENS, NAMES.FLOOR_CREATE, FIGURES[0].threshold],
  ['GET /tokens/<id> (reveal)', NAMES.GET_TOKEN, NAMES.FLOOR_REVEAL, FIGURES[1].threshold],
  ['POST /proxy (3 tokens)', NAMES.PROXY_N, NAMES.FLOOR_PROXY, FIGURES[2].threshold],
];

/**
 * Where each floor comparison's CPU goes, per request: the server's and PostgreSQL's (bench/database-cpu.js).
 * The server, the database and the load share the machine's cores, so when they are all busy the req/s ratio
 * cannot pass floor CPU ÷ route CPU however the route's own code is written.
 *
 * `ceiling` is that bound for the leanest server imaginable that still makes the route's statements: one that
 * spends no more CPU than the floor's own node:http server, while PostgreSQL does the work the route asks of
 * it (its rows, their indexes, the audit records and their sealing). A target above the ceiling cannot be met
 * by any code in the server, only by asking less of the database.
 *
 * Rows lacking a figure are left out: [{ route, server, database, floor_server, floor_database,
 * floor_over_route, ceiling, target }] (CPU in ms per request).
 */
function floorCpu(rows) {
  const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
  const cpu = (name) => {
    const server = field(byName, name, 'server_cpu_ms_per_request');
    const database = field(byName, name, 'database_cpu_ms_per_request');
    return server === null || database === null ? null : { server, database, total: server + database };
  };
  return FLOOR_PAIRS.map(([label, route, floor, target]) => [label, cpu(route), cpu(floor), target])
    .filter(([, route, floor]) => route !== null && floor !== null)
    .map(([label, route, floor, target]) => ({
      route: label,
      server: round(route.server),
      database: round(route.database),
      floor_server: round(floor.server),
      floor_database: round(floor.database),
      floor_over_route: round(floor.total / route.total),
      ceiling: round(floor.total / (floor.server + route.database)),
      target,
    }));
}

/** floorCpu's rows as a table; null when there are none. */
function floorCpuLines(comparisons) {
  if (comparisons.length === 0) {
    return null;
  }
  const cells = comparisons.map((c) => [
    c.route,
    ...[c.server, c.database, c.floor_server, c.floor_database, c.floor_over_route, c.ceiling].map((v) =>
      v.toFixed(3),
    ),
    `≥ ${c.target}`,
  ]);
  return textTable(
    ['route', 'server', 'database', 'floor server', 'floor database', 'floor ÷ route', 'ceiling', 'target'],
    cells,
  );
}

/**
 * The proxy floor's own added p50 at 1 connection (its p50 less the direct call's), the reference for the
 * vault's: what a server that reads the rows and forwards the call adds before any auth, decryption,
 * templating or audit; null when either row did not run.
 */
function floorAddedP50(rows) {
  const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
  const added = addedP50(byName, NAMES.FLOOR_PROXY_1);
  return added === null ? null : round(added);
}

module.exports = {
  FLOOR_CONNECTIONS,
  NAMES,
  floorAddedP50,
  floorCpu,
  floorCpuLines,
  hotPaths,
  hotPathLines,
  median,
};
