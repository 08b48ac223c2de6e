import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { FreshStore, freshStore } from '../support/fresh-store';
import { startHttpsTestServer, TestHttpsServer } from '../support/https-test-server';
import { OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver';
import { TEST_HOST } from '../support/outbound';
import { ensureBuild, SpawnedServer } from '../support/spawned-server';
import {
  ancestors,
  bootTracedVault,
  callerTraceparent,
  SERVER_KIND,
  TRACED_KEY,
  TRACED_SCRIPT,
  waitUntil,
} from '../support/traced-boot';
import { createTestCa, TestCa } from '../support/test-pki';

const ROOT = join(__dirname, '..', '..');

describe('OTEL_* settings refused at start', () => {
  beforeAll(() => ensureBuild(), 180_000);

  it.each([
    [{ OTEL_BSP_SCHEDULE_DELAY: 'soon' }, /^OTEL_BSP_SCHEDULE_DELAY must be a whole number from 0 to \d+$/],
    [
      { OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4096' },
      /^OTEL_BSP_MAX_EXPORT_BATCH_SIZE must not be more than OTEL_BSP_MAX_QUEUE_SIZE \(2048\)$/,
    ],
  ])('%j: exit 1 with one line naming the setting', (setting, message) => {
    const env = {
      PATH: process.env.PATH ?? '',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1',
      ...setting,
    };
    let failure: { status: number; stderr: string } = { status: 0, stderr: '' };
    try {
      execFileSync(process.execPath, ['dist/src/tracing/start.js'], { cwd: ROOT, env, stdio: 'pipe' });
    } catch (err) {
      const { status, stderr } = err as { status: number; stderr: Buffer };
      failure = { status, stderr: stderr.toString() };
    }
    expect(failure.status).toBe(1);
    const lines = failure.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0].replace(/^Configuration error: /, '')).toMatch(message);
  });
});

describe('trace links and the OTEL_* settings, at an OTLP/HTTP receiver', () => {
  let store: FreshStore;
  let receiver: OtlpReceiver;
  let ca: TestCa;
  let destination: TestHttpsServer;
  const hooks: { headers: IncomingHttpHeaders; body: string }[] = [];
  const servers: SpawnedServer[] = [];

  beforeAll(async () => {
    ensureBuild();
    store = await freshStore({ migrated: true });
    receiver = await startOtlpReceiver();
    ca = createTestCa();
    destination = await startHttpsTestServer(ca.issue([TEST_HOST]), (req, res, body) => {
      hooks.push({ headers: req.headers, body: body.toString('utf8') });
      res.writeHead(204).end();
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

  it('a token create’s webhook delivery: a trace of its own, linked to the request’s; the receiver gets its traceparent; baggage goes nowhere', async () => {
    const vault = await bootTracedVault(
      store,
      receiver,
      TRACED_SCRIPT,
      { TEST_DESTINATION_HOST: TEST_HOST, PROXY_ALLOW_LOOPBACK: 'true', PROXY_CA_FILE: ca.file },
      servers,
    );
    const webhook = await vault.call('/webhooks', TRACED_KEY, {
      method: 'POST',
      body: JSON.stringify({
        name: 'linked',
        url: `https://${TEST_HOST}:${destination.port}/hook`,
        events: ['token.created'],
      }),
    });
    expect(webhook.status).toBe(201);
    const app = await vault.call('/applications', TRACED_KEY, {
      method: 'POST',
      body: JSON.stringify({ name: 'linked', type: 'private', permissions: ['token:create'] }),
    });
    expect(app.status).toBe(201);

    const caller = callerTraceparent();
    const baggageValue = randomBytes(12).toString('hex');
    const token = await vault.call('/tokens', app.body.key as string, {
      method: 'POST',
      headers: { traceparent: caller.header, baggage: `tenant.note=${baggageValue}` },
      body: JSON.stringify({ type: 'token', data: 'linked' }),
    });
    expect(token.status).toBe(201);
    await waitUntil(() => hooks.length > 0, 20_000);
    await vault.stop();

    const request = receiver.spans.filter((s) => s.traceId === caller.traceId);
    const server = request.find((s) => s.kind === SERVER_KIND)!;
    expect(server).toMatchObject({ name: 'POST /tokens', parentSpanId: caller.parentId });

    // A new trace, linked to the span that published the event (the request's, or one of its children).
    const delivery = receiver.spans.find((s) => s.name === 'webhook deliver')!;
    expect(delivery.traceId).not.toBe(caller.traceId);
    expect(delivery.parentSpanId).toBe('');
    expect(delivery.links).toHaveLength(1);
    const [link] = delivery.links;
    expect(link.traceId).toBe(caller.traceId);
    const linked = request.find((s) => s.spanId === link.spanId)!;
    expect([linked.spanId, ...ancestors(request, linked)]).toContain(server.spanId);
    expect(delivery.attributes).toMatchObject({ 'token_vault.webhook.outcome': 'delivered' });

    // The receiver continues the delivery's trace, as a child of the delivery's POST.
    const [hook] = hooks;
    const sent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(hook.headers.traceparent));
    expect(sent?.[1]).toBe(delivery.traceId);
    const post = receiver.spans.find((s) => s.spanId === sent?.[2])!;
    expect(post.parentSpanId).toBe(delivery.spanId);
    expect(hook.headers.baggage).toBeUndefined();

    // The caller's baggage: in no span, attribute or log line.
    expect(receiver.bodies.join('\n')).not.toContain(baggageValue);
    expect(vault.server.output()).not.toContain(baggageValue);
  }, 120_000);

  it('OTEL_PROPAGATORS with only an unknown value (warned, ignored: no propagator), OTEL_BSP_SCHEDULE_DELAY, OTEL_RESOURCE_ATTRIBUTES', async () => {
    const vault = await bootTracedVault(
      store,
      receiver,
      'node',
      {
        OTEL_PROPAGATORS: 'xray',
        OTEL_BSP_SCHEDULE_DELAY: '50',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=settings%2Ctest,service.name=overridden',
      },
      servers,
    );
    const caller = callerTraceparent();
    expect(
      (await vault.call('/applications/key', TRACED_KEY, { headers: { traceparent: caller.header } })).status,
    ).toBe(200);
    const ours = () =>
      receiver.spans.find(
        (s) => s.kind === SERVER_KIND && s.resource['deployment.environment.name'] === 'settings,test',
      );
    // Sent 50 ms after it ended, not at the default 5 s (nor only at the shutdown flush).
    await waitUntil(() => ours() !== undefined, 4_000);
    const server = ours();
    await vault.stop();

    expect(server).toMatchObject({
      name: 'GET /applications/key',
      parentSpanId: '',
      resource: { 'service.name': 'vault-under-test' },
    });
    expect(server!.traceId).not.toBe(caller.traceId);
    expect(vault.lines()).toContainEqual(
      expect.objectContaining({
        context: 'OpenTelemetry',
        msg: 'OTEL_PROPAGATORS: "xray" is not a propagator this vault has (tracecontext, baggage, none); ignored',
      }),
    );
  }, 120_000);
});
