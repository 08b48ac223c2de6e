'use strict';
/**
 * Issue 39's hot-path figures, each a ratio to (or a difference from) a baseline measured in the same run. The
 * floors are bench/floor-server.js (plain node:http + pg, each request's statements and audit rows in one
 * round trip, bench/floor-statements.js) on the vault's database with the vault's pool size; the bare NestJS
 * rows (bench/nest-floor.js) make the same statements, so the framework's own share shows. `npm run bench`
 * prints them as a table of their own at the end and writes them to bench/results/latest.json (`hot_paths`);
 * `BENCH_ONLY=floors` runs just the scenarios they need.
 */

const { FLOOR_CONNECTIONS, NAMES } = require('./hot-path-names');

/** A row's figure, or null when it did not run or more than 1 % of its answers were not 2xx (nothing to compare). */
const field = (byName, name, key) => {
  const row = byName[name];
  if (row === undefined || !(row.requests > 0) || (row.non_2xx + row.errors) / row.requests > 0.01) {
    return null;
  }
  const value = row[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
};

function median(values) {
  if (values.length === 0) {
    return null;
  }
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** A ratio of two rows' `key`: { value, detail } or null. */
function ratio(key, unit) {
  return (name, reference) => (b) => {
    const [x, y] = [field(b, name, key), field(b, reference, key)];
    return x === null || y === null || !(y > 0)
      ? null
      : { value: x / y, detail: `${fmt(x)} vs ${fmt(y)}${unit}` };
  };
}
const rpsRatio = ratio('requests_per_second', ' req/s');

/** A row's server + database CPU ms per request, or null. */
const cpuTotal = (byName, name) => {
  const server = field(byName, name, 'server_cpu_ms_per_request');
  const database = field(byName, name, 'database_cpu_ms_per_request');
  return server === null || database === null ? null : server + database;
};

/** A row's server + database + sandbox workers' CPU ms per request, or null. */
const cpuWithSandbox = (byName, name) => {
  const total = cpuTotal(byName, name);
  const sandbox = field(byName, name, 'sandbox_cpu_ms_per_request');
  return total === null || sandbox === null ? null : total + sandbox;
};

/** `name`'s server + database CPU per request ÷ `reference`'s (`total`: how a row's CPU is summed). */
const cpuRatio =
  (name, reference, total = cpuTotal) =>
  (b) => {
    const [x, y] = [total(b, name), total(b, reference)];
    return x === null || y === null || !(y > 0)
      ? null
      : { value: x / y, detail: `${fmt(x)} vs ${fmt(y)} ms CPU` };
  };
const p99Ratio = ratio('latency_p99_ms', ' ms');

/** `name`'s p50 less `reference`'s (both taken from every response's own time). */
const p50Difference = (name, reference) => (b) => {
  const [x, y] = [field(b, name, 'latency_p50_ms'), field(b, reference, 'latency_p50_ms')];
  return x === null || y === null ? null : { value: x - y, detail: `${fmt(x)} vs ${fmt(y)} ms` };
};

const fmt = (value) => (value >= 100 ? value.toFixed(0) : value.toFixed(2));

/**
 * The figures, in the order: { figure, floor, measure(byName) -> { value, detail } | null, op,
 * threshold, unit, difference } (null: a scenario it needs did not run). `op` null: shown, not a target.
 */
const FIGURES = [
  {
    figure: 'POST /tokens (card) ÷ floor (req/s)',
    floor: 'node:http + one statement: INSERT the token row + its audit row',
    measure: rpsRatio(NAMES.POST_TOKENS, NAMES.FLOOR_CREATE),
    op: '>=',
    threshold: 0.6,
  },
  // What BT-IDEMPOTENCY-KEY adds to the create (its claim and its kept answer): shown, no target.
  {
    figure: 'POST /tokens (card, keyed) ÷ floor (req/s)',
    floor: 'the create floor (it keeps no answer)',
    measure: rpsRatio(NAMES.POST_TOKENS_KEYED, NAMES.FLOOR_CREATE),
    op: null,
  },
  {
    figure: 'GET /tokens/<id> reveal ÷ floor (req/s)',
    floor: 'node:http + one statement: SELECT by key + INSERT its audit row',
    measure: rpsRatio(NAMES.GET_TOKEN, NAMES.FLOOR_REVEAL),
    op: '>=',
    threshold: 0.7,
  },
  {
    figure: "reveal p50 at 1 connection, minus the floor's p50",
    floor: 'the same floor, 1 connection',
    measure: p50Difference(NAMES.GET_TOKEN_1, NAMES.FLOOR_REVEAL_1),
    op: '<=',
    threshold: 0.5,
    unit: ' ms',
    difference: true,
  },
  {
    figure: 'POST /proxy, 3 token expressions ÷ floor (req/s)',
    floor: 'node:http + one statement: SELECT 2 rows + INSERT 2 audit rows, then keep-alive HTTPS POST',
    measure: rpsRatio(NAMES.PROXY_N, NAMES.FLOOR_PROXY),
    op: '>=',
    threshold: 0.6,
  },
  {
    figure: "proxy p50 at 1 connection, minus the floor's p50",
    floor: 'the same floor, 1 connection',
    measure: p50Difference(NAMES.PROXY_1, NAMES.FLOOR_PROXY_1),
    op: '<=',
    threshold: 0.7,
    unit: ' ms',
    difference: true,
  },
  {
    figure: "react p50 at 1 connection, minus the audited read floor's p50",
    floor: 'audited read floor (the reveal floor), 1 connection',
    measure: p50Difference(NAMES.REACT_1, NAMES.FLOOR_REVEAL_1),
    op: '<=',
    threshold: 1.5,
    unit: ' ms',
    difference: true,
  },
  {
    figure: 'warm react ÷ GET /health (req/s, 16 connections)',
    floor: '—',
    measure: rpsRatio(NAMES.REACT_16, NAMES.HEALTH),
    op: '>=',
    threshold: 0.1,
  },
  // The sandbox's own share (bench/sandbox-floor.js): no target, shown so the figures above can be read
  // against what isolated-vm costs per run when nothing else happens.
  {
    figure: 'sandbox floor: CPU ms per run (fresh context + prelude + the bench reactor, no IPC)',
    floor: '—',
    measure: (b) => {
      const cpu = field(b, NAMES.SANDBOX_FLOOR, 'cpu_ms_per_run');
      const p50 = field(b, NAMES.SANDBOX_FLOOR, 'p50_ms');
      return cpu === null ? null : { value: cpu, detail: `p50 ${fmt(p50)} ms per run` };
    },
    op: null,
    unit: ' ms',
  },
  {
    figure: "warm react: sandbox workers' CPU per request ÷ the sandbox floor's per run",
    floor: 'the sandbox floor',
    measure: (b) => {
      const workers = field(b, NAMES.REACT_16, 'sandbox_cpu_ms_per_request');
      const floor = field(b, NAMES.SANDBOX_FLOOR, 'cpu_ms_per_run');
      return workers === null || floor === null || !(floor > 0)
        ? null
        : { value: workers / floor, detail: `${fmt(workers)} vs ${fmt(floor)} ms` };
    },
    op: null,
  },
  {
    // A react costs at least the sandbox floor, so while every core is busy its req/s ÷ /health's cannot pass
    // /health's server CPU per request ÷ the floor's CPU per run. (The database's CPU is left out: on a shared
    // PostgreSQL server it counts other clients' work too, and /health asks next to nothing of it.)
    figure: 'warm react ÷ GET /health: ceiling set by the sandbox floor alone',
    floor: 'the sandbox floor',
    measure: (b) => {
      const health = field(b, NAMES.HEALTH, 'server_cpu_ms_per_request');
      const floor = field(b, NAMES.SANDBOX_FLOOR, 'cpu_ms_per_run');
      return health === null || floor === null || !(floor > 0)
        ? null
        : { value: health / floor, detail: `${fmt(health)} vs ${fmt(floor)} ms CPU` };
    },
    op: null,
  },
  // The react figures' bound (bench/react-floor.js): a reaction's unavoidable work alone, the sandbox in
  // worker processes included. Where these miss the targets above, the targets are out of reach by measurement.
  {
    figure: "react floor p50 at 1 connection minus the audited read floor's p50",
    floor: 'node:http + token read and 2 audit rows (one statement), AES-GCM open, sandbox worker process',
    measure: p50Difference(NAMES.FLOOR_REACT_1, NAMES.FLOOR_REVEAL_1),
    op: null,
    unit: ' ms',
    difference: true,
  },
  {
    figure: `react floor ÷ GET /health (req/s, ${FLOOR_CONNECTIONS} connections)`,
    floor: 'the react floor',
    measure: rpsRatio(NAMES.FLOOR_REACT_16, NAMES.HEALTH),
    op: null,
  },
  {
    figure: `vault react CPU ÷ react floor CPU (server + database + sandbox per request, ${FLOOR_CONNECTIONS} connections)`,
    floor: 'the react floor',
    measure: cpuRatio(NAMES.REACT_16, NAMES.FLOOR_REACT_16, cpuWithSandbox),
    op: null,
  },
  {
    figure: 'list by metadata at 100 k tokens: p99 ÷ reveal p99',
    floor: '—',
    measure: p99Ratio(NAMES.LIST_BY_METADATA, NAMES.GET_TOKEN),
    op: '<=',
    threshold: 2,
  },
  // The list figure's bound (bench/list-floor.js): the list's unavoidable work alone, against the vault's
  // reveal. Above 2, the target is out of reach by measurement with every property kept.
  {
    figure: 'list floor p99 ÷ reveal p99',
    floor: 'node:http + the list page statement, 20 AES-GCM opens, batched audit record',
    measure: p99Ratio(NAMES.FLOOR_LIST, NAMES.GET_TOKEN),
    op: null,
  },
  {
    figure: 'list floor CPU ÷ reveal CPU (server + database per request)',
    floor: 'the list floor',
    measure: cpuRatio(NAMES.FLOOR_LIST, NAMES.GET_TOKEN),
    op: null,
  },
  {
    figure: 'vault list CPU ÷ list floor CPU (server + database per request)',
    floor: 'the list floor',
    measure: cpuRatio(NAMES.LIST_BY_METADATA, NAMES.FLOOR_LIST),
    op: null,
  },
  {
    figure: 'tokenize 100 leaves: tokens/s ÷ single-create req/s (median of 3)',
    floor: '—',
    measure: (b) => {
      const runs = NAMES.TOKENIZE_RUNS.map((name) => field(b, name, 'tokens_per_second')).filter(
        (v) => v !== null,
      );
      const tokens = runs.length === NAMES.TOKENIZE_RUNS.length ? median(runs) : null;
      const creates = field(b, NAMES.POST_TOKENS, 'requests_per_second');
      return tokens === null || creates === null || !(creates > 0)
        ? null
        : { value: tokens / creates, detail: `${fmt(tokens)} tokens/s vs ${fmt(creates)} req/s` };
    },
    op: '>=',
    threshold: 15,
  },
  // The framework's own share: no target, shown so the rest of the gap can be told from Nest's and Express's.
  {
    figure: 'bare NestJS on Express, create ÷ floor (req/s)',
    floor: 'the create floor',
    measure: rpsRatio(NAMES.NEST_CREATE, NAMES.FLOOR_CREATE),
    op: null,
  },
  {
    figure: 'bare NestJS on Express, reveal ÷ floor (req/s)',
    floor: 'the reveal floor',
    measure: rpsRatio(NAMES.NEST_REVEAL, NAMES.FLOOR_REVEAL),
    op: null,
  },
  {
    figure: 'bare NestJS on Express, proxy ÷ floor (req/s)',
    floor: 'the proxy floor',
    measure: rpsRatio(NAMES.NEST_PROXY, NAMES.FLOOR_PROXY),
    op: null,
  },
  {
    figure: "bare NestJS on Express, reveal p50 at 1 connection, minus the floor's p50",
    floor: 'the reveal floor, 1 connection',
    measure: p50Difference(NAMES.NEST_REVEAL_1, NAMES.FLOOR_REVEAL_1),
    op: null,
    unit: ' ms',
    difference: true,
  },
];

const round = (value) => Math.round(value * 1000) / 1000;

/** The figures measured on this run's rows: [{ figure, floor, measured, detail, op, threshold, unit, pass }]. */
function hotPaths(rows) {
  const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
  return FIGURES.map(({ figure, floor, measure, op, threshold = null, unit = '', difference = false }) => {
    const result = measure(byName);
    const measured = result === null ? null : round(result.value);
    const pass =
      measured === null || op === null ? null : op === '>=' ? measured >= threshold : measured <= threshold;
    return { figure, floor, measured, detail: result?.detail ?? null, op, threshold, unit, difference, pass };
  });
}

/** "+0.84 ms (1.79 vs 0.95 ms)" for a difference, "0.21" for a ratio. */
function nowCell(f) {
  if (f.measured === null) {
    return '-';
  }
  if (f.difference) {
    return `${f.measured >= 0 ? '+' : ''}${f.measured.toFixed(2)}${f.unit} (${f.detail})`;
  }
  return f.measured.toFixed(2);
}

function targetCell(f) {
  if (f.op === null) {
    return '—';
  }
  const sign = f.difference ? '+' : '';
  // As the issue writes them: ≥ 0.60, ≤ 2, ≥ 15, ≤ +0.5 ms.
  const threshold = f.difference
    ? f.threshold.toFixed(1)
    : f.threshold < 1
      ? f.threshold.toFixed(2)
      : String(f.threshold);
  return `${f.op === '>=' ? '≥' : '≤'} ${sign}${threshold}${f.unit}`;
}

/** The figures as the table: figure | floor | now | target | verdict. */
function hotPathLines(figures) {
  const cells = figures.map((f) => [
    f.figure,
    f.floor,
    nowCell(f),
    targetCell(f),
    f.measured === null ? 'n/a (not run)' : f.op === null ? 'shown' : f.pass ? 'PASS' : 'MISS',
  ]);
  return textTable(['figure', 'floor', 'now', 'target', 'verdict'], cells, 2);
}

/** Rows of text cells under `header`, indented, the first `left` columns left-aligned and the others right. */
function textTable(header, cells, left = 1) {
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((c) => c[i].length)));
  const line = (values) =>
    `  ${values.map((v, i) => (i < left ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ')}`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** The threshold of the figure whose name starts with `figure`. */
const thresholdOf = (figure) => FIGURES.find((f) => f.figure.startsWith(figure)).threshold;

module.exports = {
  FLOOR_CONNECTIONS,
  NAMES,
  field,
  hotPaths,
  hotPathLines,
  median,
  round,
  textTable,
  thresholdOf,
};
