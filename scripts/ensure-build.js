#!/usr/bin/env node
'use strict';
/**
 * Compiles the service (tsc -p tsconfig.build.json) when dist/src/main.js is missing or older than any
 * source it is built from. Runs before `npm start`, `npm run cli`, `npm run openapi` and `npm run bench`,
 * so it must stay cheap when nothing changed: one stat per file, no compiler start.
 *
 *   node scripts/ensure-build.js           build if needed
 *   node scripts/ensure-build.js --force   always build
 */
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, rmSync, statSync, utimesSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..');
const output = join(root, 'dist', 'src', 'main.js');
/** What the build reads besides src/: a change to one of these changes the output too. */
const INPUT_FILES = ['ormconfig.ts', 'tsconfig.json', 'tsconfig.build.json'];

/** Newest modification time under `dir`; directories count too, so a deleted or renamed file triggers a build. */
function newestIn(dir, best) {
  let newest = best;
  const stat = statSync(dir.path);
  if (stat.mtimeMs > newest.mtimeMs) {
    newest = { mtimeMs: stat.mtimeMs, path: dir.path };
  }
  for (const entry of readdirSync(dir.path, { withFileTypes: true })) {
    const path = join(dir.path, entry.name);
    if (entry.isDirectory()) {
      newest = newestIn({ path }, newest);
    } else if (entry.isFile() && /\.[jt]s$/.test(entry.name) && !entry.name.endsWith('.spec.ts')) {
      // Unit tests (*.spec.ts) are excluded from the build, so editing them needs no rebuild.
      const mtimeMs = statSync(path).mtimeMs;
      if (mtimeMs > newest.mtimeMs) {
        newest = { mtimeMs, path };
      }
    }
  }
  return newest;
}

function reasonToBuild() {
  if (process.argv.includes('--force')) {
    return 'forced';
  }
  if (!existsSync(output)) {
    return 'no build yet';
  }
  let newest = newestIn({ path: join(root, 'src') }, { mtimeMs: 0, path: '' });
  for (const file of INPUT_FILES) {
    const path = join(root, file);
    if (existsSync(path)) {
      const mtimeMs = statSync(path).mtimeMs;
      if (mtimeMs > newest.mtimeMs) {
        newest = { mtimeMs, path };
      }
    }
  }
  return newest.mtimeMs > statSync(output).mtimeMs ? `${relative(root, newest.path)} changed` : null;
}

function main() {
  const reason = reasonToBuild();
  if (reason === null) {
    return 0;
  }
  process.stderr.write(`Building Token Vault (${reason})...\n`);
  const started = Date.now();
  const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  // process.execPath: the Node that runs this script (the pinned one under npm), not whatever is on PATH.
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    // tsc emits even when it reports errors; drop the entry point so the next run builds again.
    rmSync(output, { force: true });
    process.stderr.write('The build failed (see the errors above).\n');
    return result.status ?? 1;
  }
  const assets = spawnSync(process.execPath, [join(__dirname, 'copy-assets.js')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (assets.status !== 0) {
    rmSync(output, { force: true });
    return assets.status ?? 1;
  }
  // Stamp the output with the start time: a source saved while tsc was running still counts as newer.
  const startedAt = new Date(started);
  utimesSync(output, startedAt, startedAt);
  process.stderr.write(`Built in ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);
  return 0;
}

process.exitCode = main();
