import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Document, fenceOf, readDocument, ShellBlock, shellBlocks } from './shell-blocks';

/**
 * How test/docs runs the documents' shell blocks: one bash script per document (or walk-through), strict
 * (`set -euo pipefail`), where any HTTP error fails the run and shows its body.
 */
const HEADER = ['set -euo pipefail', 'curl() { command curl --fail-with-body "$@"; }'];

/**
 * The vault a walk-through starts (see `server` in shell-blocks.ts), waited for until it has finished starting
 * (ready, or sealed: a sealed vault is ready once key holders unseal it); run in a process group of its own
 * (`set -m`), so stopping it stops npm and the server it runs; its output goes to DOCS_TEST_SERVER_LOG and
 * its process group to DOCS_TEST_PIDS, from which the test stops a server the script left behind.
 */
const SERVER_FUNCTIONS = `
__server=
__stop_vault() {
  if [ -n "$__server" ]; then
    kill -TERM -- "-$__server" 2>/dev/null || true
    wait "$__server" 2>/dev/null || true
    __server=
  fi
}
trap __stop_vault EXIT
__wait_vault() {
  for _ in $(seq 1 1200); do
    case "$(command curl -s "$VAULT/health/ready" || true)" in
      *'"status":"ok"'* | *'sealed: '*) return 0 ;;
    esac
    if ! kill -0 "$__server" 2>/dev/null; then
      echo "the vault exited before it was ready; its output:" >&2
      tail -n 40 "$DOCS_TEST_SERVER_LOG" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "the vault was not ready within 120 s" >&2
  exit 1
}`;

function startServer(command: string): string {
  return [
    '__stop_vault',
    'set -m',
    `${command} >>"$DOCS_TEST_SERVER_LOG" 2>&1 &`,
    '__server=$!',
    'set +m',
    'echo "$__server" >>"$DOCS_TEST_PIDS"',
    '__wait_vault',
  ].join('\n');
}

/** What the README's Quick start leaves behind: the vault started once (until it is ready) and stopped. */
export const QUICK_START = [startServer('npm start'), '__stop_vault'].join('\n');

/** A server block: its lines before the last command as they are, that command in the background. */
function serverBlock(block: ShellBlock): string {
  const lines = block.body.split('\n');
  let first = lines.length - 1;
  while (first > 0 && lines[first - 1].endsWith('\\')) {
    first--;
  }
  const command = lines.slice(first).join('\n');
  if (/\s#/.test(command)) {
    throw new Error(`line ${block.line}: the server command of a server block takes no trailing comment`);
  }
  return [...lines.slice(0, first), startServer(command)].join('\n');
}

/** Whether a block runs in this run: not `no-test`, and not `postgres` unless the run is on PostgreSQL. */
export function runsHere(block: ShellBlock, onPostgres: boolean): boolean {
  const fence = fenceOf(block);
  return !fence.noTest && (onPostgres || !fence.postgres);
}

/** The blocks of a walk-through (`null`: the document's own shell) that run in this run, in order. */
export function blocksOf(document: Document, walkthrough: string | null, onPostgres: boolean): ShellBlock[] {
  return shellBlocks(readDocument(document)).filter(
    (b) => runsHere(b, onPostgres) && fenceOf(b).walkthrough === walkthrough,
  );
}

/**
 * The blocks as one script, with the settings a reader fills in (`NAME=value`, at the start of a line) set
 * to the test's values. Each setting must be in the blocks, so a renamed one fails the test.
 */
export function scriptOf(
  blocks: ShellBlock[],
  settings: Record<string, string>,
  prologue: string[] = [],
): string {
  let script = blocks.map((b) => (fenceOf(b).server ? serverBlock(b) : b.body)).join('\n');
  for (const [name, value] of Object.entries(settings)) {
    const assignment = new RegExp(`^${name}=\\S+`, 'm');
    if (!assignment.test(script)) {
      throw new Error(`the setting ${name} is not in the blocks`);
    }
    script = script.replace(assignment, `${name}='${value}'`);
  }
  const servers = blocks.some((b) => fenceOf(b).server) || prologue.length > 0;
  return [...HEADER, ...(servers ? [SERVER_FUNCTIONS] : []), ...prologue, script].join('\n');
}

export function run(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', script],
      {
        cwd,
        // The project's Node first on PATH, as under npm scripts; HOME for npx's cache.
        env: {
          PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
          HOME: process.env.HOME ?? cwd,
          ...env,
        },
        timeout: 240_000,
        maxBuffer: 16 << 20,
      },
      (err, stdout, stderr) =>
        resolve({
          code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1,
          output: stdout + stderr,
        }),
    );
  });
}

/** Stops (SIGKILL) the process groups of the servers a script started and left running (a failed run). */
export function killLeftovers(pidsFile: string): void {
  let pids: string[];
  try {
    pids = readFileSync(pidsFile, 'utf8').split('\n');
  } catch {
    return;
  }
  for (const pid of pids.filter((p) => /^\d+$/.test(p))) {
    try {
      process.kill(-Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
