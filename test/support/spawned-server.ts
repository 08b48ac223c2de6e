import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Builds dist/ when the sources are newer (what `npm start` does), so spawned-server tests run the real entry point. */
export function ensureBuild(): void {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'ensure-build.js')], { cwd: ROOT, stdio: 'ignore' });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export interface SpawnedServer {
  process: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `node dist/src/main.js` (or `npm start`, as an operator starts it, or another script run by node) with the
 * given environment (and no inherited DATABASE_URL unless given).
 */
export function spawnServer(
  env: Record<string, string>,
  how: 'node' | 'npm start' | { script: string } = 'node',
): SpawnedServer {
  const [command, args] =
    how === 'npm start'
      ? ['npm', ['start']]
      : [process.execPath, [how === 'node' ? join(ROOT, 'dist', 'src', 'main.js') : how.script]];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { process: child, output: () => out, exited };
}

/** Waits until the output contains `text` (or the process exits, or the time runs out). */
export async function waitForOutput(server: SpawnedServer, text: string, ms = 30_000): Promise<void> {
  for (const until = Date.now() + ms; Date.now() < until;) {
    if (server.output().includes(text)) {
      return;
    }
    if (server.process.exitCode !== null) {
      throw new Error(`server exited: ${server.output().slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for "${text}": ${server.output().slice(-2000)}`);
}

/** The process's exit, or an error carrying its last output when it has not exited within `ms`. */
export async function exitWithin(
  server: SpawnedServer,
  ms = 30_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`still running after ${ms} ms: ${server.output().slice(-3000)}`)),
      ms,
    );
  });
  try {
    return await Promise.race([server.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** `node dist/src/main.js` with `env` on a free port of 127.0.0.1, once it says it is running, and its URL. */
export async function bootVault(
  env: Record<string, string>,
): Promise<{ server: SpawnedServer; base: string }> {
  const port = await freePort();
  const server = spawnServer({ ...env, PORT: String(port) });
  await waitForOutput(server, 'Token Vault is running', 120_000);
  return { server, base: `http://127.0.0.1:${port}` };
}
