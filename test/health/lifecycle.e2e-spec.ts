import { createServer, Server } from 'node:net';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuild, exitWithin, freePort, spawnServer, waitForOutput } from '../support/spawned-server';
import { TEST_MASTER_KEYS } from '../support/test-app';

const KEY = 'key_' + '7'.repeat(44);

describe('starting and stopping the server (node dist/src/main.js)', () => {
  let dir: string;
  beforeAll(() => {
    ensureBuild();
    dir = mkdtempSync(join(tmpdir(), 'tv-lifecycle-'));
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints one line naming PORT and exits 1 on a busy port, creating nothing', async () => {
    const port = await freePort();
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', () => r()));
    try {
      const dataDir = join(dir, 'busy');
      const server = spawnServer({
        PORT: String(port),
        DATA_DIR: dataDir,
        VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
      });
      const { code } = await server.exited;
      expect(code).toBe(1);
      const lines = server.output().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/PORT/);
      expect(lines[0]).not.toMatch(/\bat \S+ \(|\.js:\d+/);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      blocker.close();
    }
  });

  it('drains in-flight requests on SIGTERM, exits 0, and loses no acknowledged write', async () => {
    const port = await freePort();
    const env = {
      PORT: String(port),
      DATA_DIR: join(dir, 'drain'),
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
      VAULT_BOOTSTRAP_API_KEY: KEY,
    };
    const base = `http://127.0.0.1:${port}`;
    const first = spawnServer(env);
    await waitForOutput(first, 'Token Vault is running');
    expect(first.output()).toContain(`${base.replace('127.0.0.1', 'localhost')}/docs`);
    const app = (await (
      await fetch(`${base}/applications`, {
        method: 'POST',
        headers: { 'BT-API-KEY': KEY, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'load', type: 'private', permissions: ['token:create', 'token:read'] }),
      })
    ).json()) as { key: string };

    const acknowledged: string[] = [];
    let refused = 0;
    const create = async (i: number): Promise<void> => {
      try {
        const res = await fetch(`${base}/tokens`, {
          method: 'POST',
          headers: { 'BT-API-KEY': app.key, 'Content-Type': 'application/json' },
          body: JSON.stringify({ type: 'token', data: `value ${i}` }),
        });
        if (res.status === 201) {
          acknowledged.push(((await res.json()) as { id: string }).id);
        } else {
          refused++;
        }
      } catch {
        refused++; // connection refused after the server stopped accepting: not acknowledged, fine
      }
    };
    const load = Array.from({ length: 200 }, (_, i) =>
      new Promise((r) => setTimeout(r, i * 2)).then(() => create(i)),
    );
    await new Promise((r) => setTimeout(r, 150));
    first.process.kill('SIGTERM');
    await Promise.all(load);
    const exit = await exitWithin(first);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(first.output()).not.toMatch(/"level":50|more than once/);
    // One line when the shutdown begins and one when it ends, for the operator's log.
    expect(first.output()).toMatch(/SIGTERM received: shutting down[\s\S]*Shut down in \d+ ms/);
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(acknowledged.length + refused).toBe(200);

    const second = spawnServer(env);
    await waitForOutput(second, 'Token Vault is running');
    try {
      for (const id of acknowledged) {
        const res = await fetch(`${base}/tokens/${id}`, { headers: { 'BT-API-KEY': app.key } });
        expect(res.status).toBe(200);
      }
    } finally {
      second.process.kill('SIGTERM');
      expect(await exitWithin(second)).toEqual({ code: 0, signal: null });
    }
    // Two boots of a spawned server (migrations on a fresh database) and 200 writes: past the default
    // limit on a busy CI machine.
  }, 150_000);

  it('stops the server when the `npm start` that started it is signalled', async () => {
    const port = await freePort();
    const server = spawnServer(
      { PORT: String(port), DATA_DIR: join(dir, 'npm'), VAULT_MASTER_KEYS: TEST_MASTER_KEYS },
      'npm start',
    );
    await waitForOutput(server, 'Token Vault is running');
    server.process.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    // The server shares npm's output: its last line arrives once it has closed the database.
    await waitForOutput(server, 'Shut down in', 15_000);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  });
});
