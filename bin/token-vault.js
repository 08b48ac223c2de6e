#!/usr/bin/env node
'use strict';
/**
 * The operator CLI as a package bin: `npx token-vault <command> [options]`. Builds first when the sources
 * changed (scripts/ensure-build.js, which reports on stderr), then runs dist/src/cli.js with this terminal,
 * so stdout carries only the command's own output: `npx token-vault audit:export > audit.jsonl` and
 * `npx token-vault tenant:create ... --json` are parseable. `npm run cli -- <command>` does the same for
 * people, with npm's banner on stdout.
 */
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..');
// The Node that runs this launcher builds too: under npx that is the project's pinned Node 24.
const build = spawnSync(process.execPath, [join(root, 'scripts', 'ensure-build.js')], {
  cwd: root,
  // Nothing of the build on stdout: its progress and errors go to stderr.
  stdio: ['ignore', process.stderr, 'inherit'],
});
if (build.status !== 0) {
  process.exit(build.status ?? 1);
}
const cli = spawnSync(process.execPath, [join(root, 'dist', 'src', 'cli.js'), ...process.argv.slice(2)], {
  stdio: 'inherit',
});
if (cli.signal !== null) {
  process.kill(process.pid, cli.signal);
}
process.exit(cli.status ?? 1);
