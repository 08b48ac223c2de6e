import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { FreshStore } from './fresh-store';
import type { OtlpReceiver, ReceivedSpan } from './otlp-receiver';
import { exitWithin, freePort, spawnServer, SpawnedServer, waitForOutput } from './spawned-server';
import { TEST_MASTER_KEYS } from './test-app';

export const SERVER_KIND = 2;
export const CLIENT_KIND = 3;
/** The bootstrap management key of a traced vault. */
export const TRACED_KEY = 'key_' + '7'.repeat(44);
/** test/support/traced-vault.js: main.ts's order, with a test resolver for the destination's name. */
export const TRACED_SCRIPT = { script: join(__dirname, 'traced-vault.js') };

export interface TracedVault {
  server: SpawnedServer;
  call(
    path: string,
    key: string,
    init?: RequestInit,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** SIGTERM, then expects exit code 0 (the spans flushed). */
  stop(): Promise<void>;
  /** The JSON lines it wrote. */
  lines(): Record<string, unknown>[];
}

/** A vault on `store` that sends its spans to `receiver`, started and listening. */
export async function bootTracedVault(
  store: FreshStore,
  receiver: OtlpReceiver,
  how: 'node' | { script: string },
  env: Record<string, string>,
  servers: SpawnedServer[],
): Promise<TracedVault> {
  const port = await freePort();
  const server = spawnServer(
    {
      ...store.env,
      PORT: String(port),
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
      VAULT_BOOTSTRAP_API_KEY: TRACED_KEY,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'vault-under-test',
      ...env,
    },
    how,
  );
  servers.push(server);
  await waitForOutput(server, how === 'node' ? 'Token Vault is running' : 'traced test vault', 60_000);
  return {
    server,
    call: async (path, key, init = {}) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        ...init,
        headers: { 'content-type': 'application/json', 'BT-API-KEY': key, ...init.headers },
      });
      const text = await res.text();
      return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> };
    },
    stop: async () => {
      server.process.kill('SIGTERM');
      expect((await exitWithin(server)).code).toBe(0);
    },
    lines: () =>
      server
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** The ids of the ancestors of `span` within `spans`, nearest first. */
export function ancestors(spans: ReceivedSpan[], span: ReceivedSpan): string[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain: string[] = [];
  for (let at = byId.get(span.parentSpanId); at !== undefined; at = byId.get(at.parentSpanId)) {
    chain.push(at.spanId);
  }
  return chain;
}

/** A caller's sampled `traceparent`, with its ids. */
export function callerTraceparent(): { header: string; traceId: string; parentId: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { header: `00-${traceId}-${parentId}-01`, traceId, parentId };
}

/** Polls until `done` holds or `ms` pass. */
export async function waitUntil(done: () => boolean, ms: number): Promise<void> {
  for (let waited = 0; !done() && waited < ms; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
  }
}
