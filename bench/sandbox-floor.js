'use strict';
/**
 * The sandbox's own floor: what one run costs isolated-vm itself when nothing else happens, so the react
 * figures can be read against it. In one process started with the sandbox workers' V8 flags, one warm
 * isolate with the prelude and the modules compiled once runs the bench reactor's code again and again, each
 * run in a fresh context as the workers do (context, prelude, code, module wrappers, the call, the release of
 * the context and of every Reference into it), with no IPC, HTTP, database or audit. Prints one JSON line:
 * { runs, cpu_ms_per_run, p50_ms }.
 *
 * Run by bench/run.js as `node --no-node-snapshot --jitless bench/sandbox-floor.js <seconds>`.
 */
const { execFile } = require('node:child_process');
const { join } = require('node:path');
const { NAMES } = require('./hot-path-names');
const { REACT_CODE } = require('./sandbox-code');
const { warmIsolate } = require('./sandbox-run');

/**
 * bench/sandbox-floor.js in a process with the sandbox workers' V8 flags, for `seconds`, once the vault's rows
 * are done (so nothing else of the bench runs beside it): a row for hotPaths, or null when it failed.
 */
function measureSandboxFloor(seconds) {
  return new Promise((resolve) => {
    const args = ['--no-node-snapshot', '--jitless', join(__dirname, 'sandbox-floor.js'), String(seconds)];
    execFile(process.execPath, args, { timeout: (seconds + 30) * 1000 }, (err, stdout, stderr) => {
      if (err !== null) {
        console.log(`sandbox floor not measured: ${stderr.trim() || err.message}\n`);
        resolve(null);
        return;
      }
      const floor = JSON.parse(stdout);
      console.log(
        `${NAMES.SANDBOX_FLOOR}: ${floor.cpu_ms_per_run} ms CPU per run, p50 ${floor.p50_ms} ms (${floor.runs} runs)\n`,
      );
      resolve({ name: NAMES.SANDBOX_FLOOR, requests: floor.runs, non_2xx: 0, errors: 0, ...floor });
    });
  });
}

/** The isolate, its compiled scripts and one run's work, as a sandbox worker holds and does them. */
function sandbox() {
  const dist = join(__dirname, '..', 'dist', 'src', 'sandbox');
  const { PRELUDE } = require(join(dist, 'prelude.js'));
  const { MODULE_SOURCES } = require(join(dist, 'modules', 'index.js'));
  const isolate = warmIsolate(require('isolated-vm'), {
    memoryMb: 128,
    prelude: PRELUDE,
    modules: MODULE_SOURCES,
    code: REACT_CODE,
  });
  const input = JSON.stringify({
    req: { args: { card: { number: '4242424242424242', expiration_month: 12 } }, configuration: {} },
    bt: false,
    fetch: true,
  });
  const check = (result) => {
    if (!JSON.parse(result).ok) {
      throw new Error(`the bench reactor failed: ${result}`);
    }
  };
  return () => isolate.run(isolate.prepare(), input, check);
}

async function main(seconds) {
  const once = sandbox();
  const warmUntil = Date.now() + 1000;
  while (Date.now() < warmUntil) {
    await once();
  }
  const times = [];
  const cpu = process.cpuUsage();
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const start = process.hrtime.bigint();
    await once();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  const round = (value) => Math.round(value * 1000) / 1000;
  process.stdout.write(
    `${JSON.stringify({
      runs: times.length,
      cpu_ms_per_run: round((used.user + used.system) / 1000 / times.length),
      p50_ms: round(times[Math.floor(times.length / 2)]),
    })}\n`,
  );
}

if (require.main === module) {
  main(Number(process.argv[2] ?? 5)).catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}

module.exports = { measureSandboxFloor };
