'use strict';
// What bench/run.js prints and writes: a row per scenario, the targets' verdicts, the table.

function summarize(scenario, result) {
  const requestsPerSecond = result.duration > 0 ? result.requests.total / result.duration : 0;
  return {
    name: scenario.name,
    requests_per_second: round(requestsPerSecond, 1),
    ...(scenario.tokensPerRequest
      ? { tokens_per_second: round(requestsPerSecond * scenario.tokensPerRequest, 0) }
      : {}),
    latency_p50_ms: round(result.preciseLatency?.p50 ?? result.latency.p50, 2),
    latency_p99_ms: round(result.preciseLatency?.p99 ?? result.latency.p99, 2),
    latency_avg_ms: round(result.preciseLatency?.average ?? result.latency.average, 2),
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

/** Every target of the selected scenarios, measured on the rows of this run. */
function evaluateTargets(selected, rows) {
  const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
  return selected.flatMap((scenario) =>
    (scenario.targets ?? []).map((target) => {
      const row = byName[scenario.name];
      const raw = row === undefined ? null : target.measure(row, byName);
      const measured = raw === null || !Number.isFinite(raw) ? null : round(raw, 3);
      const pass =
        measured === null
          ? null
          : target.op === '>='
            ? measured >= target.threshold
            : measured <= target.threshold;
      return {
        scenario: scenario.name,
        target: target.label,
        op: target.op,
        threshold: target.threshold,
        unit: target.unit ?? '',
        measured,
        pass,
      };
    }),
  );
}

function targetLines(targets) {
  const describe = (t) => `${t.scenario}: ${t.target} ${t.op === '>=' ? '≥' : '≤'} ${t.threshold}${t.unit}`;
  const width = Math.max(0, ...targets.map((t) => describe(t).length));
  return targets
    .map((t) => {
      const verdict = t.pass === null ? 'n/a (a scenario it needs did not run)' : t.pass ? 'PASS' : 'MISS';
      const measured = t.measured === null ? '-' : `${t.measured}${t.unit}`;
      return `  ${describe(t).padEnd(width)}  measured ${measured.padStart(8)}  ${verdict}`;
    })
    .join('\n');
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
  // CPU the server process spent per request: steadier than req/s when other work shares the machine.
  [
    'srv CPU ms/req',
    (r) => (r.server_cpu_ms_per_request === null ? '-' : r.server_cpu_ms_per_request.toFixed(3)),
  ],
  // CPU of the PostgreSQL server per request (bench/database-cpu.js), when it runs on this machine.
  [
    'db CPU ms/req',
    (r) =>
      typeof r.database_cpu_ms_per_request === 'number' ? r.database_cpu_ms_per_request.toFixed(3) : '-',
  ],
];
/** Shown only when a row of the table has it. */
const TOKENS_COLUMN = [
  'tokens/s',
  (r) => (r.tokens_per_second === undefined ? '-' : String(r.tokens_per_second)),
];
/** The sandbox workers' CPU per request, shown when a row ran tenant code. */
const SANDBOX_COLUMN = [
  'sandbox CPU ms/req',
  (r) => (typeof r.sandbox_cpu_ms_per_request === 'number' ? r.sandbox_cpu_ms_per_request.toFixed(3) : '-'),
];

function table(rows) {
  const columns = [
    ...COLUMNS,
    ...(rows.some((r) => typeof r.sandbox_cpu_ms_per_request === 'number') ? [SANDBOX_COLUMN] : []),
    ...(rows.some((r) => r.tokens_per_second !== undefined) ? [TOKENS_COLUMN] : []),
  ];
  const cells = rows.map((row) => columns.map(([, get]) => get(row)));
  const widths = columns.map(([title], i) => Math.max(title.length, ...cells.map((c) => c[i].length)));
  const line = (values) =>
    values.map((v, i) => (columns[i][2] === 'left' ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  return [
    line(columns.map(([title]) => title)),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.map(line),
  ]
    .map((l) => `  ${l}`)
    .join('\n');
}

module.exports = { summarize, evaluateTargets, targetLines, round, table };
