'use strict';
/** Where the CPU of each route measured against a floor goes, and the bounds that follow from it (issue 39). */
const { NAMES } = require('./hot-path-names');
const { field, round, textTable, thresholdOf } = require('./hot-paths');

/** The routes measured against a floor, with the floor each is compared to and its target (FIGURES). */
const FLOOR_PAIRS = [
  [
    'POST /tokens (card)',
    NAMES.POST_TOKENS,
    NAMES.FLOOR_CREATE,
    thresholdOf('POST /tokens (card) ÷'),
    NAMES.NEST_CREATE,
  ],
  ['POST /tokens (card, keyed)', NAMES.POST_TOKENS_KEYED, NAMES.FLOOR_CREATE, null, NAMES.NEST_CREATE],
  [
    'GET /tokens/<id> (reveal)',
    NAMES.GET_TOKEN,
    NAMES.FLOOR_REVEAL,
    thresholdOf('GET /tokens/<id> reveal'),
    NAMES.NEST_REVEAL,
  ],
  [
    'POST /proxy (3 expressions)',
    NAMES.PROXY_N,
    NAMES.FLOOR_PROXY,
    thresholdOf('POST /proxy, 3 token'),
    NAMES.NEST_PROXY,
  ],
  // Its target is on p99, not req/s: shown for the CPU split (the list floor's own figures are in FIGURES).
  ['GET /tokens?metadata (list)', NAMES.LIST_BY_METADATA, NAMES.FLOOR_LIST, null, null],
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
 * `framework_ceiling` is the same bound for a server that spends what the bare NestJS-on-Express app spends
 * making the floor's statement (bench/nest-floor.js) and nothing more: the product keeps NestJS on Express,
 * so no vault on that stack gets above it. Null where the bare Nest row did not run.
 *
 * `server_budget` is the bound the other way round: the server CPU per request at which the route, with its
 * own database work, would reach the target on a machine whose cores are all busy (floor total ÷ target −
 * route database). A route whose server spends more cannot reach the target; at or below 0 no server can.
 * Null for a row without a target.
 *
 * Rows lacking a figure are left out: [{ route, server, database, floor_server, floor_database,
 * floor_over_route, ceiling, framework_ceiling, server_budget, target }] (CPU in ms per request).
 */
function floorCpu(rows) {
  const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
  const cpu = (name) => {
    const server = field(byName, name, 'server_cpu_ms_per_request');
    const database = field(byName, name, 'database_cpu_ms_per_request');
    return server === null || database === null ? null : { server, database, total: server + database };
  };
  return FLOOR_PAIRS.map(([label, route, floor, target, nest]) => [
    label,
    cpu(route),
    cpu(floor),
    target,
    nest === null ? null : cpu(nest),
  ])
    .filter(([, route, floor]) => route !== null && floor !== null)
    .map(([label, route, floor, target, nest]) => ({
      route: label,
      server: round(route.server),
      database: round(route.database),
      floor_server: round(floor.server),
      floor_database: round(floor.database),
      floor_over_route: round(floor.total / route.total),
      ceiling: round(floor.total / (floor.server + route.database)),
      framework_ceiling: nest === null ? null : round(floor.total / (nest.server + route.database)),
      server_budget: target === null ? null : round(floor.total / target - route.database),
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
    c.framework_ceiling === null ? '—' : c.framework_ceiling.toFixed(3),
    c.server_budget === null ? '—' : c.server_budget.toFixed(3),
    c.target === null ? '—' : `≥ ${c.target}`,
  ]);
  return textTable(
    [
      'route',
      'server',
      'database',
      'floor server',
      'floor database',
      'floor ÷ route',
      'ceiling',
      'Nest ceiling',
      'server budget',
      'target',
    ],
    cells,
  );
}

module.exports = { floorCpu, floorCpuLines };
