'use strict';
/**
 * Where a profiled window's CPU time went: `node bench/profile-summary.js <file.cpuprofile> [--top N]
 * [--requests N]` prints the top functions and files by self time (time spent in their own code, not in what
 * they call), with each one's share of the busy time; with --requests (bench/run.js prints the count of a
 * profiled row), also µs per request. Files under node_modules are grouped by package, Node's own code as
 * node:*, so "where one request's time went" reads by layer (express, @nestjs/core, pg, the vault's dist/).
 */
const { readFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const ROOT = join(__dirname, '..');
/** V8's pseudo-frames: not code of any file. */
const IDLE = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

function usage() {
  process.stderr.write('usage: node bench/profile-summary.js <file.cpuprofile> [--top N] [--requests N]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const options = { file: null, top: 25, requests: null };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--top' || arg === '--requests') {
      const value = Number(argv[i + 1]);
      if (!Number.isInteger(value) || value < 1) {
        usage();
      }
      options[arg.slice(2)] = value;
      i += 1;
    } else if (options.file === null && !arg.startsWith('--')) {
      options.file = arg;
    } else {
      usage();
    }
  }
  if (options.file === null) {
    usage();
  }
  return options;
}

/** A frame's file: inside its package for node_modules, node:* for Node's own, else relative to the repo. */
function pathOf(url) {
  if (url === '') {
    return '(native)';
  }
  const path = url.startsWith('file://') ? decodeURIComponent(new URL(url).pathname) : url;
  const modules = path.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    return `node_modules/${path.slice(modules + '/node_modules/'.length)}`;
  }
  return path.startsWith('/') ? relative(ROOT, path) : path;
}

/** What a file is grouped under: its package for node_modules, else the file. */
function groupOf(path) {
  if (!path.startsWith('node_modules/')) {
    return path;
  }
  const [, scopeOrName, name] = path.split('/');
  return `node_modules/${scopeOrName.startsWith('@') ? `${scopeOrName}/${name}` : scopeOrName}`;
}

/** Self time in µs per node id, from the samples and their time deltas (as Chrome DevTools counts it). */
function selfTimes(profile) {
  const byNode = new Map();
  const { samples = [], timeDeltas = [] } = profile;
  for (let i = 0; i < samples.length; i += 1) {
    // A sample's time is the delta to the next sample; the last one gets the mean.
    const delta =
      i + 1 < timeDeltas.length ? timeDeltas[i + 1] : (profile.endTime - profile.startTime) / samples.length;
    byNode.set(samples[i], (byNode.get(samples[i]) ?? 0) + Math.max(0, delta));
  }
  return byNode;
}

function summarize(profile) {
  const times = selfTimes(profile);
  const functions = new Map();
  const files = new Map();
  const pseudo = new Map();
  let busy = 0;
  for (const node of profile.nodes) {
    const us = times.get(node.id) ?? 0;
    if (us === 0) {
      continue;
    }
    const { functionName, url, lineNumber } = node.callFrame;
    if (IDLE.has(functionName)) {
      pseudo.set(functionName, (pseudo.get(functionName) ?? 0) + us);
      if (functionName !== '(idle)') {
        busy += us;
      }
      continue;
    }
    busy += us;
    const path = pathOf(url);
    const name = `${functionName || '(anonymous)'}  ${path}${url ? `:${lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    files.set(groupOf(path), (files.get(groupOf(path)) ?? 0) + us);
  }
  return { functions, files, pseudo, busy, wall: profile.endTime - profile.startTime };
}

function lines(title, entries, busy, top, requests) {
  const sorted = [...entries].sort((a, b) => b[1] - a[1]).slice(0, top);
  const width = Math.max(title.length, ...sorted.map(([name]) => name.length));
  const header = `  ${title.padEnd(width)}  ${'self ms'.padStart(9)}  ${'share'.padStart(6)}${requests ? '  µs/request' : ''}`;
  const rows = sorted.map(([name, us]) => {
    const perRequest = requests ? `  ${(us / requests).toFixed(1).padStart(10)}` : '';
    return `  ${name.padEnd(width)}  ${(us / 1000).toFixed(1).padStart(9)}  ${((100 * us) / busy).toFixed(1).padStart(5)}%${perRequest}`;
  });
  return [header, ...rows].join('\n');
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const profile = JSON.parse(readFileSync(options.file, 'utf8'));
  const { functions, files, pseudo, busy, wall } = summarize(profile);
  const ms = (us) => `${(us / 1000).toFixed(1)} ms`;
  const perRequest = options.requests
    ? `, ${(busy / options.requests).toFixed(1)} µs per request over ${options.requests} requests`
    : '';
  console.log(`${options.file}: ${ms(wall)} profiled, ${ms(busy)} busy (not idle)${perRequest}`);
  console.log(`  ${[...pseudo].map(([name, us]) => `${name} ${ms(us)}`).join(', ') || 'no pseudo-frames'}\n`);
  console.log(`${lines('file or package', files, busy, options.top, options.requests)}\n`);
  console.log(lines('function (self time)', functions, busy, options.top, options.requests));
}

main();
