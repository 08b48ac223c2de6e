'use strict';
/**
 * `npm run bench`: starts the built service on a throw-away database and measures each scenario of
 * bench/scenarios.js with autocannon (bench/autocannon-runs.js), reporting throughput as a ratio of the GET /health baseline measured
 * in the same run (absolute numbers depend on the machine; ratios travel).
 *
 * Environment:
 *   BENCH_DURATION       seconds measured per scenario (10)
 *   BENCH_WARMUP         seconds of unmeasured warm-up before each scenario (2)
 *   BENCH_CONNECTIONS    concurrent connections (20)
 *   BENCH_ONLY           run only the scenarios whose name or group contains this text (the baseline always
 *                        runs); BENCH_ONLY=proxy runs the /proxy scenarios and their direct HTTPS baselines
 *   BENCH_DATABASE_URL   PostgreSQL server to run on (a new database is created and dropped); default:
 *                        the embedded database in a temporary folder, where scenarios with
 *                        `database: 'postgres'` (a second tenant, made by an operator command) are skipped
 *   BENCH_CPU_PROF       folder: run the server (and the proxy vault and floor servers, when they run) with
 *                        --cpu-prof and write their .cpuprofile files there on stop (open them in Chrome DevTools
 *                        or speedscope; profiling slows the servers down)
 *   BENCH_PROFILE        1 (every scenario) or text in a scenario's name: profile the server that scenario
 *                        measures over its measured window only (bench/profile-window.js), writing
 *                        bench/results/<scenario>.cpuprofile; `node bench/profile-summary.js <file>` prints where
 *                        the time went. The profiled rows' figures are not comparable (the profiler slows them)
 * Each row also shows the CPU time the server process spent per request (Linux only): it stays comparable when
 * other work shares the machine; with BENCH_DATABASE_URL on this machine, also the PostgreSQL server's
 * (bench/database-cpu.js), which shares the same cores. Scenarios with a `server` run against a second vault
 * (bench/proxy-vault.js, allowed to proxy to loopback), a local HTTPS echo server (bench/echo-server.js), a
 * floor server (bench/floor-server.js) or a vault whose master key is in a SoftHSM2 token
 * (bench/pkcs11-vault.js), each started the first time such a scenario is selected and stopped at the end
 * (bench/servers.js). Scenario
 * targets are listed as PASS/MISS at the end, then issue 39's hot-path figures (bench/hot-paths.js) as a table
 * of their own. Everything is also written to bench/results/latest.json.
 */
const { execFileSync } = require('node:child_process');
const { mkdirSync, writeFileSync } = require('node:fs');
const { join, resolve } = require('node:path');
const scenarios = require('./scenarios');
const { floorCpu, floorCpuLines } = require('./floor-cpu');
const { hotPathLines, hotPaths, NAMES } = require('./hot-paths');
const { profileFileName, profileSelection } = require('./profile-window');
const { autocannonOptions, measure, startBackground, stopBackground } = require('./autocannon-runs');
const { evaluateTargets, round, summarize, table, targetLines } = require('./report');
const { startServer } = require('./server');
const { databaseCpuMeter } = require('./database-cpu');
const { measureSandboxFloor } = require('./sandbox-floor');
const { benchServers } = require('./servers');

const RESULTS_DIR = join(__dirname, 'results');
const RESULTS_FILE = join(RESULTS_DIR, 'latest.json');

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
    cpuProfileDir: process.env.BENCH_CPU_PROF?.trim() ? resolve(process.env.BENCH_CPU_PROF.trim()) : null,
    /** Which scenarios' windows to profile (BENCH_PROFILE), or null. */
    profile: profileSelection(process.env.BENCH_PROFILE),
  };
}

/** autocannon options for a scenario's request definition. */
/** HEAD's short hash, with "+dirty" when src/ differs from it: the bench measures the working tree it builds. */
function gitCommit() {
  const git = (args) =>
    execFileSync('git', args, { cwd: join(__dirname, '..'), stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  try {
    const head = git(['rev-parse', '--short', 'HEAD']);
    return git(['status', '--porcelain', '--', 'src']) === '' ? head : `${head}+dirty`;
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
  const matches = (s) =>
    config.only === null || s.name.includes(config.only) || (s.group ?? '').includes(config.only);
  const selected = [baseline, ...scenarios.filter((s) => s !== baseline && matches(s))];

  let server = null;
  /** The proxy vault, echo and floor servers, started the first time a scenario needs them. */
  let helpers = null;
  const running = () => [server, ...(helpers?.running() ?? [])].filter((p) => p !== null);
  const stopAll = () => Promise.all(running().map((p) => p.stop()));
  const crashes = () =>
    running()
      .map((p) => p.unexpectedExit())
      .filter((crash) => crash !== null);
  const stopOnSignal = (signal) => {
    process.stderr.write(`\n${signal}: stopping the server\n`);
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  process.once('exit', () => running().forEach((p) => p.killNow()));

  const startedAt = new Date();
  const commit = gitCommit();
  server = await startServer({
    postgresUrl: config.postgresUrl,
    cpuProfileDir: config.cpuProfileDir,
    profileWindows: config.profile !== null,
  });
  const databaseMeter = databaseCpuMeter(config.postgresUrl);
  const rows = [];
  /** Scenarios not run on this database (`database: 'postgres'` on the embedded one). */
  const skipped = [];
  try {
    console.log(
      `Token Vault benchmark (${commit ?? 'unknown commit'}): ${server.database} database, node ${process.version}, ` +
        `${config.connections} connections, ` +
        `${config.duration} s per scenario after ${config.warmup} s of warm-up\n`,
    );
    helpers = benchServers(config, server);
    for (const scenario of selected) {
      if (scenario.database === 'postgres' && server.database !== 'PostgreSQL') {
        // Such a scenario needs a second process on the database (an operator command, a floor server).
        console.log(`${scenario.name}\n  skipped: needs PostgreSQL (set BENCH_DATABASE_URL)\n`);
        skipped.push(scenario.name);
        continue;
      }
      // Where the requests go and whose CPU time the row shows: the vault, the proxy vault, the echo server or
      // a floor server.
      const { target, origin, ctx } = await helpers.forScenario(scenario);
      const setupNotes = {};
      const setupStarted = Date.now();
      const data = scenario.setup
        ? await scenario.setup({
            ...ctx,
            log: (line) => console.log(`${scenario.name}: ${line}`),
            record: (name, value) => {
              setupNotes[name] = value;
            },
          })
        : undefined;
      const setupSeconds = (Date.now() - setupStarted) / 1000;
      const definition =
        typeof scenario.request === 'function' ? scenario.request(ctx, data) : scenario.request;
      const options = autocannonOptions(origin, definition);
      // A scenario may fix its own concurrency (latency at 1 connection, say); others use BENCH_CONNECTIONS.
      const connections = scenario.connections ?? config.connections;
      const load = startBackground(scenario, ctx, data, origin, config);
      if (config.warmup > 0) {
        await measure(options, config.warmup, connections);
      }
      const profiled = config.profile?.(scenario.name) === true && target.profile ? target.profile : null;
      if (profiled !== null) {
        mkdirSync(RESULTS_DIR, { recursive: true });
        await profiled.start();
      }
      const cpuBefore = target.cpuSeconds();
      const sandboxBefore = target.childrenCpuSeconds?.() ?? null;
      const databaseCpu = databaseMeter.start();
      const row = summarize(
        scenario,
        await measure(options, config.duration, connections, scenario.preciseLatency === true),
      );
      row.connections = connections;
      const cpuAfter = target.cpuSeconds();
      const sandboxAfter = target.childrenCpuSeconds?.() ?? null;
      const databaseSeconds = databaseCpu();
      if (profiled !== null) {
        const file = await profiled.stop(join(RESULTS_DIR, profileFileName(scenario.name)));
        row.cpu_profile = { file, requests: row.requests };
      }
      if (load !== null) {
        row.background = await stopBackground(load);
      }
      row.server_cpu_ms_per_request =
        cpuBefore !== null && cpuAfter !== null && row.requests > 0
          ? round(((cpuAfter - cpuBefore) * 1000) / row.requests, 3)
          : null;
      // The sandbox workers' CPU (the vault's child processes); a worker replaced mid-row is not counted.
      row.sandbox_cpu_ms_per_request =
        sandboxBefore !== null && sandboxAfter !== null && sandboxAfter > sandboxBefore && row.requests > 0
          ? round(((sandboxAfter - sandboxBefore) * 1000) / row.requests, 3)
          : null;
      row.database_cpu_ms_per_request =
        databaseSeconds !== null && row.requests > 0
          ? round((databaseSeconds * 1000) / row.requests, 3)
          : null;
      if (scenario.setup) {
        row.setup = { seconds: round(setupSeconds, 1), ...setupNotes };
      }
      const reference = rows[0] ?? row;
      row.ratio_vs_baseline =
        reference.requests_per_second > 0
          ? round(row.requests_per_second / reference.requests_per_second, 3)
          : null;
      rows.push(row);
      console.log(`${scenario.name}\n${table([row])}\n`);
      if (row.cpu_profile !== undefined) {
        console.log(
          `  profiled (figures slowed by the profiler): node bench/profile-summary.js ${row.cpu_profile.file} ` +
            `--requests ${row.requests}\n`,
        );
      }
      if (row.background !== undefined) {
        console.log(
          `  background: ${row.background.requests} requests on ${row.background.connections} connections, ` +
            `status codes ${JSON.stringify(row.background.status_codes)}\n`,
        );
      }
      if (row.non_2xx > 0 || row.errors > 0) {
        console.log(
          `  warning: status codes ${JSON.stringify(row.status_codes)}, ${row.errors} connection errors\n`,
        );
        if (target.output !== undefined && target.output.length > 0) {
          console.log(
            `  last lines of the server's output:\n${target.output.map((l) => `    ${l}`).join('\n')}\n`,
          );
        }
      }
      const [crash] = crashes();
      if (crash !== undefined) {
        throw new Error(`${scenario.name}: ${crash}`);
      }
    }
  } catch (err) {
    // A setup request to a crashed server fails as "fetch failed": say why the server is gone.
    const [crash] = crashes();
    if (crash !== undefined && !(err instanceof Error && err.message.includes(crash))) {
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n${crash}`);
    }
    throw err;
  } finally {
    await stopAll();
  }

  console.log(`Summary (throughput relative to ${baseline.name})\n${table(rows)}\n`);
  const targets = evaluateTargets(selected, rows);
  if (targets.length > 0) {
    console.log(`Targets\n${targetLines(targets)}\n`);
  }
  const sandboxFloor = rows.some((r) => r.name === NAMES.REACT_16 || r.name === NAMES.REACT_1)
    ? await measureSandboxFloor(config.duration)
    : null;
  const hot = hotPaths(sandboxFloor === null ? rows : [...rows, sandboxFloor]);
  if (hot.some((figure) => figure.measured !== null)) {
    console.log(
      `Issue 39 hot paths (each a ratio to, or a difference from, a baseline of this run)\n${hotPathLines(hot)}\n`,
    );
  }
  const floorComparisons = floorCpu(rows);
  const floorCpuTable = floorCpuLines(floorComparisons);
  if (floorCpuTable !== null) {
    console.log(`CPU ms per request of the floor comparisons, server and PostgreSQL\n${floorCpuTable}\n`);
  }
  mkdirSync(RESULTS_DIR, { recursive: true });
  const report = {
    started_at: startedAt.toISOString(),
    commit,
    node: process.version,
    database: server.database,
    duration_s: config.duration,
    warmup_s: config.warmup,
    connections: config.connections,
    baseline: baseline.name,
    scenarios: rows,
    ...(skipped.length > 0 ? { skipped } : {}),
    targets,
    hot_paths: hot,
    ...(sandboxFloor !== null ? { sandbox_floor: sandboxFloor } : {}),
    floor_cpu: floorComparisons,
  };
  writeFileSync(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`Results written to ${RESULTS_FILE}`);
  if (config.cpuProfileDir !== null) {
    console.log(
      `CPU profiles of the vault and of the proxy vault and floor servers that ran written to ${config.cpuProfileDir}`,
    );
  }
}

main().catch((err) => {
  process.stderr.write(`Benchmark failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
