import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { FreshStore, freshStore } from '../support/fresh-store';
import { startHttpsTestServer, TestHttpsServer } from '../support/https-test-server';
import { OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver';
import { TEST_HOST } from '../support/outbound';
import { ensureBuild, freePort, spawnServer } from '../support/spawned-server';
import {
  ancestors,
  bootTracedVault,
  callerTraceparent,
  CLIENT_KIND,
  SERVER_KIND,
  TRACED_KEY,
  TRACED_SCRIPT,
  waitUntil,
} from '../support/traced-boot';
import { createTestCa, TestCa } from '../support/test-pki';
import { cardData } from '../support/token-factory';
import { signatureValid } from '../support/webhook-receiver';

const ROOT = join(__dirname, '..', '..');

describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  beforeAll(() => ensureBuild(), 180_000);

  it('loads no OpenTelemetry SDK, exporter or instrumentation and patches nothing (main.ts import order)', () => {
    const script = `
      require('./dist/src/tracing/start');
      require('./dist/src/app');
      const loaded = Object.keys(require.cache).filter((f) =>
        /node_modules\\/(@opentelemetry\\/(?!api\\/)|require-in-the-middle|import-in-the-middle)/.test(f));
      const http = require('node:http');
      process.stdout.write(JSON.stringify({ loaded, patched: '__wrapped' in http.request || '__wrapped' in http.Server.prototype.emit }));`;
    const env = { PATH: process.env.PATH ?? '', OTEL_SERVICE_NAME: 'unused' };
    const out = execFileSync(process.execPath, ['-e', script], { cwd: ROOT, env }).toString();
    expect(JSON.parse(out)).toEqual({ loaded: [], patched: false });
  });
});

describe('traces to an OTLP/HTTP receiver', () => {
  let store: FreshStore;
  let receiver: OtlpReceiver;
  let ca: TestCa;
  let destination: TestHttpsServer;
  const received: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const servers: ReturnType<typeof spawnServer>[] = [];

  beforeAll(async () => {
    ensureBuild();
    store = await freshStore({ migrated: true });
    receiver = await startOtlpReceiver();
    ca = createTestCa();
    destination = await startHttpsTestServer(ca.issue([TEST_HOST]), (req, res, body) => {
      received.push({ url: req.url ?? '', headers: req.headers, body: body.toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
  }, 180_000);

  afterAll(async () => {
    servers.forEach((s) => s.process.kill('SIGKILL'));
    await Promise.all(servers.map((s) => s.exited));
    await destination?.close();
    await receiver?.close();
    ca?.dispose();
    await store?.drop();
  });

  const boot = (how: 'node' | { script: string }, env: Record<string, string> = {}) =>
    bootTracedVault(store, receiver, how, env, servers);

  it('node dist/src/main.js: a request continues the caller’s trace, with its statements, and log lines carry the ids', async () => {
    const vault = await boot('node');
    const caller = callerTraceparent();
    const res = await vault.call('/applications/key', TRACED_KEY, {
      headers: { traceparent: caller.header },
    });
    expect(res.status).toBe(200);
    await vault.stop();

    const trace = receiver.spans.filter((s) => s.traceId === caller.traceId);
    const server = trace.find((s) => s.kind === SERVER_KIND);
    expect(server).toMatchObject({
      name: 'GET /applications/key',
      parentSpanId: caller.parentId,
      attributes: { 'http.route': '/applications/key', 'http.response.status_code': 200 },
      resource: { 'service.name': 'vault-under-test' },
    });
    const statements = trace.filter((s) => s.attributes['db.system.name'] === 'postgresql');
    expect(statements.length).toBeGreaterThan(0);
    statements.forEach((s) => expect(ancestors(trace, s)).toContain(server!.spanId));
    expect(vault.lines()).toContainEqual(
      expect.objectContaining({
        msg: 'request completed',
        trace_id: caller.traceId,
        span_id: expect.any(String),
      }),
    );
  });

  it('a collector that cannot be reached: requests are served, the shutdown still exits 0 and says the spans were lost', async () => {
    // The exporter's own timeout (default 10 s) short: the shutdown's flush (5 s) then ends on the failed export
    // instead of waiting out its own limit; the outcome and the message are the same.
    const vault = await boot('node', {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
      OTEL_EXPORTER_OTLP_TIMEOUT: '500',
    });
    expect((await vault.call('/applications/key', TRACED_KEY)).status).toBe(200);
    await vault.stop();
    expect(vault.server.output()).toContain('the spans still waiting could not be sent to the collector');
  });

  it('a proxied call: server span → statements, a sandbox run and the outbound call; the destination and a webhook get the trace', async () => {
    const vault = await boot(TRACED_SCRIPT, {
      TEST_DESTINATION_HOST: TEST_HOST,
      PROXY_ALLOW_LOOPBACK: 'true',
      PROXY_CA_FILE: ca.file,
      SANDBOX_WORKERS: '1',
    });
    const base = `https://${TEST_HOST}:${destination.port}`;
    const webhook = await vault.call('/webhooks', TRACED_KEY, {
      method: 'POST',
      body: JSON.stringify({ name: 'traced', url: `${base}/hook`, events: ['token.created'] }),
    });
    expect(webhook.status).toBe(201);
    const app = await vault.call('/applications', TRACED_KEY, {
      method: 'POST',
      body: JSON.stringify({
        name: 'traced',
        type: 'private',
        rules: [
          {
            description: 'all',
            priority: 1,
            container: '/',
            transform: 'reveal',
            permissions: ['token:create', 'token:use'],
          },
        ],
      }),
    });
    expect(app.status).toBe(201);
    const appKey = app.body.key as string;
    const card = cardData();
    const token = await vault.call('/tokens', appKey, {
      method: 'POST',
      body: JSON.stringify({ type: 'card', data: card }),
    });
    expect(token.status).toBe(201);
    const proxy = await vault.call('/proxies', TRACED_KEY, {
      method: 'POST',
      body: JSON.stringify({
        name: 'traced',
        destination_url: `${base}/charge`,
        request_transform: {
          code: 'module.exports = async function (req) { return { body: req.args.body, headers: req.args.headers }; };',
        },
      }),
    });
    expect(proxy.status).toBe(201);

    const caller = callerTraceparent();
    const baggage = `caller.note=${randomBytes(12).toString('hex')}`;
    // The proxy key in the query string: the HTTP instrumentation would record it in `url.query`.
    const res = await vault.call(`/proxy?bt-proxy-key=${proxy.body.key as string}`, appKey, {
      method: 'POST',
      headers: { traceparent: caller.header, baggage },
      body: JSON.stringify({ number: `{{ ${token.body.id as string} | json: '$.number' }}` }),
    });
    expect(res.status).toBe(200);
    const charge = received.find((r) => r.url === '/charge');
    expect(JSON.parse(charge!.body)).toEqual({ number: card.number });
    await waitUntil(() => received.some((r) => r.url === '/hook'), 20_000);
    await vault.stop();

    const trace = receiver.spans.filter((s) => s.traceId === caller.traceId);
    const server = trace.find((s) => s.kind === SERVER_KIND)!;
    expect(server).toMatchObject({ name: 'POST /proxy', parentSpanId: caller.parentId });
    const outbound = trace.find(
      (s) => s.kind === CLIENT_KIND && s.attributes['server.address'] === TEST_HOST,
    )!;
    expect(outbound.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.response.status_code': 200,
    });
    const sandbox = trace.find((s) => s.name === 'sandbox run')!;
    expect(sandbox.attributes).toEqual({ 'token_vault.sandbox.outcome': 'ok' });
    const statements = trace.filter((s) => s.attributes['db.system.name'] === 'postgresql');
    expect(statements.length).toBeGreaterThan(0);
    for (const span of [outbound, sandbox, ...statements]) {
      expect(ancestors(trace, span)).toContain(server.spanId);
    }
    // The destination continues the same trace, as a child of the outbound span.
    expect(charge!.headers.traceparent).toBe(`00-${caller.traceId}-${outbound.spanId}-01`);
    // The caller's baggage goes on with the call (the default propagators), and nowhere else.
    expect(charge!.headers.baggage).toBe(baggage);
    expect(vault.server.output()).not.toContain(baggage.split('=')[1]);

    // The webhook delivery: its own trace (a job, not a request), its POST's traceparent, a valid signature.
    const hook = received.find((r) => r.url === '/hook')!;
    expect(
      signatureValid(webhook.body.secret as string, hook.headers['x-webhook-signature'] as string, hook.body),
    ).toBe(true);
    const delivery = receiver.spans.find((s) => s.name === 'webhook deliver')!;
    expect(delivery.attributes).toMatchObject({
      'token_vault.webhook.event_type': 'token.created',
      'token_vault.webhook.outcome': 'delivered',
    });
    const post = receiver.spans.find(
      (s) => s.parentSpanId === delivery.spanId && s.attributes['server.address'] === TEST_HOST,
    )!;
    expect(hook.headers.traceparent).toBe(`00-${delivery.traceId}-${post.spanId}-01`);

    // Nothing that left the vault holds the card number, a key, or a request body.
    const exported = receiver.bodies.join('\n');
    for (const secret of [
      card.number,
      TRACED_KEY,
      appKey,
      proxy.body.key as string,
      webhook.body.secret as string,
      baggage.split('=')[1],
    ]) {
      expect(exported).not.toContain(secret);
    }
    for (const span of receiver.spans) {
      expect(Object.keys(span.attributes).filter((k) => /^url\.(full|path|query)$/.test(k))).toEqual([]);
    }
  });
});
