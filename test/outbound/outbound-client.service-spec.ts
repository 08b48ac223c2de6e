import { Test, TestingModule } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import * as tls from 'node:tls';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { ConfigModule } from '../../src/config/config.module';
import {
  createTlsConnector,
  OutboundClient,
  OutboundConnector,
  OutboundError,
  OutboundModule,
  OutboundResolver,
} from '../../src/outbound';
import { startHttpsTestServer, TestHandler, TestHttpsServer } from '../support/https-test-server';
import { forbiddenConnector, staticResolver, TEST_HOST } from '../support/outbound';
import { createTestCa, selfSignedCertificate, TestCa } from '../support/test-pki';

/**
 * The outbound client against real HTTPS servers on 127.0.0.1, with certificates made by the test. The
 * test host name resolves to 127.0.0.1 through an injected resolver (never real DNS); no socket goes
 * anywhere but 127.0.0.1.
 */

let ca: TestCa;
const servers: TestHttpsServer[] = [];
const modules: TestingModule[] = [];

beforeAll(() => {
  ca = createTestCa();
});

afterEach(async () => {
  await Promise.all(modules.splice(0).map((moduleRef) => moduleRef.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

afterAll(() => {
  ca.dispose();
});

async function server(
  handler?: TestHandler,
  options: { names?: string[]; tls?: tls.SecureContextOptions } = {},
): Promise<TestHttpsServer> {
  const started = await startHttpsTestServer(ca.issue(options.names ?? [TEST_HOST]), handler, options.tls);
  servers.push(started);
  return started;
}

/** The client as production builds it (OutboundModule, default connector, PROXY_CA_FILE), test resolver. */
async function client(
  env: Record<string, string> = {},
  overrides: { resolver?: OutboundResolver; connector?: OutboundConnector } = {},
): Promise<OutboundClient> {
  const config: AppConfig = loadConfig({
    NODE_ENV: 'test',
    PROXY_ALLOW_LOOPBACK: 'true',
    PROXY_CA_FILE: ca.file,
    ...env,
  });
  const moduleRef = await Test.createTestingModule({
    imports: [
      ConfigModule.forRoot(config),
      OutboundModule.forRoot({ resolver: staticResolver({ [TEST_HOST]: '127.0.0.1' }), ...overrides }),
    ],
  }).compile();
  modules.push(moduleRef);
  return moduleRef.get(OutboundClient);
}

async function failureOf(promise: Promise<unknown>): Promise<OutboundError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(OutboundError);
    return err as OutboundError;
  }
  throw new Error('expected a rejection');
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const url = (srv: TestHttpsServer, path = '/'): string => `https://${TEST_HOST}:${srv.port}${path}`;

describe('OutboundClient against a local HTTPS server', () => {
  it('GETs through the checked address with SNI and Host set to the host name', async () => {
    const srv = await server();
    const outbound = await client();
    const response = await outbound.request({
      method: 'GET',
      url: url(srv, '/v1/items?id=1&id=2'),
      headers: { Authorization: 'Bearer abc', 'X-Custom': ['a', 'b'] },
    });
    expect(response.status).toBe(200);
    expect(response.headers['x-echo-method']).toBe('GET');
    expect(response.headers['x-echo-path']).toBe('/v1/items?id=1&id=2');
    const received = JSON.parse(String(response.headers['x-echo-headers']));
    expect(received).toEqual(
      expect.objectContaining({
        host: `${TEST_HOST}:${srv.port}`,
        authorization: 'Bearer abc',
        'x-custom': 'a, b',
      }),
    );
    expect((await readAll(response.body)).length).toBe(0);
    expect(srv.servernames).toEqual([TEST_HOST]);
  });

  it('connects to the address the guard checked, never to the name', async () => {
    const srv = await server();
    const targets: unknown[] = [];
    const real = createTlsConnector({ extraCa: ca.certPem });
    const outbound = await client({}, { connector: (target) => (targets.push(target), real(target)) });
    await readAll((await outbound.request({ method: 'GET', url: url(srv) })).body);
    expect(targets).toEqual([
      expect.objectContaining({ address: '127.0.0.1', port: srv.port, servername: TEST_HOST }),
    ]);
  });

  it('round-trips a binary body in both directions, byte for byte, for every method', async () => {
    const srv = await server();
    const outbound = await client();
    const payload = Buffer.concat([
      Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
      randomBytes(300_000),
    ]);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const response = await outbound.request({
        method,
        url: url(srv, '/upload'),
        headers: { 'content-type': 'application/octet-stream' },
        body: payload,
      });
      expect(response.headers['x-echo-method']).toBe(method);
      expect((await readAll(response.body)).equals(payload)).toBe(true);
    }
    const head = await outbound.request({ method: 'HEAD', url: url(srv) });
    expect(head.status).toBe(200);
    expect((await readAll(head.body)).length).toBe(0);
  });

  it('streams a Readable body: chunked without a length, exact with one', async () => {
    const srv = await server();
    const outbound = await client();
    const parts = [randomBytes(70_000), randomBytes(1), randomBytes(50_000)];
    const chunked = await outbound.request({ method: 'POST', url: url(srv), body: Readable.from(parts) });
    const echoed = JSON.parse(String(chunked.headers['x-echo-headers']));
    expect(echoed['transfer-encoding']).toBe('chunked');
    expect((await readAll(chunked.body)).equals(Buffer.concat(parts))).toBe(true);

    const total = String(parts.reduce((n, part) => n + part.length, 0));
    const sized = await outbound.request({
      method: 'POST',
      url: url(srv),
      headers: { 'Content-Length': total },
      body: Readable.from(parts),
    });
    expect(JSON.parse(String(sized.headers['x-echo-headers']))['content-length']).toBe(total);
    expect((await readAll(sized.body)).equals(Buffer.concat(parts))).toBe(true);
  });

  it('refuses a streamed body longer than its Content-Length before it can desync the connection', async () => {
    const srv = await server();
    const outbound = await client();
    const err = await failureOf(
      outbound.request({
        method: 'POST',
        url: url(srv),
        headers: { 'content-length': '5' },
        body: Readable.from([Buffer.from('12345GET /smuggled HTTP/1.1\r\n\r\n')]),
      }),
    );
    expect([err.failure, err.status]).toEqual(['request_body_failed', 400]);
    expect(srv.requests).toBeLessThanOrEqual(1);
  });

  it('reports a request body stream that fails as 400 request_body_failed', async () => {
    const srv = await server();
    const outbound = await client();
    const body = new Readable({ read: () => undefined });
    body.push('first part');
    setTimeout(() => body.destroy(new Error('client went away 4242424242424242')), 50);
    const err = await failureOf(outbound.request({ method: 'POST', url: url(srv), body }));
    expect([err.failure, err.status, err.detail]).toEqual([
      'request_body_failed',
      400,
      'The request body could not be read.',
    ]);
  });

  it('drops the framing and hop-by-hop headers a caller sends and keeps the connection', async () => {
    const srv = await server();
    const outbound = await client();
    for (let i = 0; i < 2; i++) {
      const response = await outbound.request({
        method: 'POST',
        url: url(srv),
        headers: {
          Host: 'internal.example',
          Connection: 'close',
          Upgrade: 'websocket',
          'Transfer-Encoding': 'chunked',
          'Content-Length': '999',
          'Keep-Alive': 'timeout=1',
          Expect: '100-continue',
          'X-Kept': 'yes',
        },
        body: 'hello',
      });
      const echoed = JSON.parse(String(response.headers['x-echo-headers']));
      expect(echoed).toEqual({
        host: `${TEST_HOST}:${srv.port}`,
        'x-kept': 'yes',
        'content-length': '5',
        connection: 'keep-alive',
      });
      expect((await readAll(response.body)).toString()).toBe('hello');
    }
    expect(srv.connections).toBe(1);
  });

  it('reuses one keep-alive connection for sequential requests to the same destination', async () => {
    const srv = await server();
    const outbound = await client();
    for (let i = 0; i < 5; i++) {
      const response = await outbound.request({ method: 'POST', url: url(srv), body: `request ${i}` });
      expect((await readAll(response.body)).toString()).toBe(`request ${i}`);
    }
    expect(srv.requests).toBe(5);
    expect(srv.connections).toBe(1);
  });

  it("opens its connections with Nagle off, as Node's own agent does", async () => {
    const srv = await server();
    const noDelay = jest.spyOn(tls.TLSSocket.prototype, 'setNoDelay');
    try {
      const socket = await createTlsConnector({ extraCa: ca.certPem })({
        address: '127.0.0.1',
        family: 4,
        port: srv.port,
        servername: TEST_HOST,
        timeoutMs: 5000,
      });
      const own = noDelay.mock.calls.filter((_, i) => noDelay.mock.contexts[i] === socket);
      socket.destroy();
      expect(own).toEqual([[true]]);
    } finally {
      noDelay.mockRestore();
    }
  });

  it('keeps separate pools per destination', async () => {
    const first = await server();
    const second = await server(undefined, { names: ['other-proxy.test'] });
    const outbound = await client(
      {},
      { resolver: staticResolver({ [TEST_HOST]: '127.0.0.1', 'other-proxy.test': '127.0.0.1' }) },
    );
    for (let i = 0; i < 3; i++) {
      await readAll((await outbound.request({ method: 'GET', url: url(first) })).body);
      await readAll(
        (await outbound.request({ method: 'GET', url: `https://other-proxy.test:${second.port}/` })).body,
      );
    }
    expect([first.connections, second.connections]).toEqual([1, 1]);
    expect(second.servernames).toEqual(['other-proxy.test']);
  });

  it('checks the DNS answer again for a new connection after the pooled one closed', async () => {
    const srv = await server();
    const answers: Record<string, string> = { [TEST_HOST]: '127.0.0.1' };
    const connector = createTlsConnector({ extraCa: ca.certPem });
    const calls: string[] = [];
    const outbound = await client(
      {},
      {
        resolver: (name) => Promise.resolve([{ address: answers[name], family: 4 }]),
        connector: (target) => (calls.push(target.address), connector(target)),
      },
    );
    await readAll((await outbound.request({ method: 'GET', url: url(srv) })).body);
    srv.server.closeIdleConnections();
    // Let the client see the close, so the next request needs a new connection.
    await new Promise((resolve) => setTimeout(resolve, 100));
    answers[TEST_HOST] = '10.0.0.1';
    const err = await failureOf(outbound.request({ method: 'GET', url: url(srv) }));
    expect(err.failure).toBe('destination_refused');
    expect(calls).toEqual(['127.0.0.1']);
    expect(srv.connections).toBe(1);
  });

  it('returns a redirect to the caller and does not follow it', async () => {
    const srv = await server((req, res) => {
      if (req.url === '/start') {
        res.writeHead(302, { location: `https://127.0.0.1:${srv.port}/secret` }).end();
      } else {
        res.writeHead(200).end('followed');
      }
    });
    const outbound = await client();
    const response = await outbound.request({ method: 'GET', url: url(srv, '/start') });
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe(`https://127.0.0.1:${srv.port}/secret`);
    await readAll(response.body);
    expect(srv.requests).toBe(1);
  });

  it('returns error statuses, headers and bodies untouched', async () => {
    const srv = await server((_req, res) => {
      res.writeHead(422, 'Unprocessable', [
        ['Set-Cookie', 'a=1'],
        ['Set-Cookie', 'b=2'],
        ['X-Case', 'Kept'],
      ]);
      res.end(Buffer.from([0, 255, 1, 254]));
    });
    const outbound = await client();
    const response = await outbound.request({ method: 'GET', url: url(srv) });
    expect([response.status, response.statusText]).toEqual([422, 'Unprocessable']);
    expect(response.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(response.rawHeaders).toEqual(expect.arrayContaining(['X-Case', 'Kept']));
    expect([...(await readAll(response.body))]).toEqual([0, 255, 1, 254]);
  });

  it('answers 408 within the bound when the destination does not answer', async () => {
    const srv = await server(() => undefined);
    const outbound = await client({ PROXY_TIMEOUT_MS: '300' });
    const started = Date.now();
    const err = await failureOf(
      outbound.request({ method: 'POST', url: url(srv), body: 'card 4242424242424242' }),
    );
    const elapsed = Date.now() - started;
    expect([err.failure, err.status]).toEqual(['timeout', 408]);
    expect(err.detail).toBe('The destination did not answer within 300 ms.');
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(3000);
  });

  it('times out a response body that stalls after the head', async () => {
    const srv = await server((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
    });
    const outbound = await client({ PROXY_TIMEOUT_MS: '300' });
    const response = await outbound.request({ method: 'GET', url: url(srv) });
    expect(response.status).toBe(200);
    const err = await failureOf(readAll(response.body));
    expect(err.failure).toBe('timeout');
  });

  it('aborts on the caller signal', async () => {
    const srv = await server(() => undefined);
    const outbound = await client();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = await failureOf(
      outbound.request({ method: 'GET', url: url(srv), signal: controller.signal }),
    );
    expect([err.failure, err.status]).toEqual(['aborted', 499]);
  });

  it('buffers a response up to a byte cap', async () => {
    const big = randomBytes(200_000);
    const srv = await server((_req, res) => res.end(big));
    const outbound = await client();
    const within = await outbound.requestBuffered({ method: 'GET', url: url(srv) }, 200_000);
    expect(within.body.equals(big)).toBe(true);
    const err = await failureOf(outbound.requestBuffered({ method: 'GET', url: url(srv) }, 199_999));
    expect([err.failure, err.status]).toEqual(['response_too_large', 502]);
  });

  it('refuses a server that only speaks TLS 1.1', async () => {
    const tls11 = { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' } as const;
    const srv = await server(undefined, { tls: tls11 });
    // The server really does speak TLS 1.1 to a client that offers it...
    await new Promise<void>((resolve, reject) => {
      const socket = tls.connect(
        { host: '127.0.0.1', port: srv.port, servername: TEST_HOST, ca: ca.certPem, ...tls11 },
        () => {
          expect(socket.getProtocol()).toBe('TLSv1.1');
          socket.destroy();
          resolve();
        },
      );
      socket.on('error', reject);
    });
    // ...and the vault's client, TLS 1.2 or later only, refuses it.
    const outbound = await client();
    const err = await failureOf(outbound.request({ method: 'GET', url: url(srv) }));
    expect([err.failure, err.status]).toEqual(['tls_failure', 502]);
    expect(err.detail).toBe('The destination does not support TLS 1.2 or later.');
    expect(srv.requests).toBe(0);
  });

  it('refuses a self-signed certificate that PROXY_CA_FILE does not vouch for', async () => {
    const srv = await startHttpsTestServer(selfSignedCertificate([TEST_HOST]));
    servers.push(srv);
    const outbound = await client();
    const err = await failureOf(outbound.request({ method: 'GET', url: url(srv) }));
    expect([err.failure, err.status]).toEqual(['tls_failure', 502]);
    expect(err.detail).toBe('The destination certificate is not trusted.');
    expect(srv.requests).toBe(0);
  });

  it('refuses the test CA when PROXY_CA_FILE is not set', async () => {
    const srv = await server();
    const outbound = await client({ PROXY_CA_FILE: '' });
    const err = await failureOf(outbound.request({ method: 'GET', url: url(srv) }));
    expect(err.failure).toBe('tls_failure');
    expect(srv.requests).toBe(0);
  });

  it('refuses a trusted certificate issued for another host name', async () => {
    const srv = await server(undefined, { names: ['someone-else.test'] });
    const outbound = await client();
    const err = await failureOf(outbound.request({ method: 'GET', url: url(srv) }));
    expect(err.detail).toBe('The destination certificate does not match the host name.');
    expect(srv.requests).toBe(0);
  });

  it('refuses an expired certificate', async () => {
    const expired = ca.issue([TEST_HOST], {
      notBefore: new Date(Date.now() - 48 * 3600_000),
      notAfter: new Date(Date.now() - 24 * 3600_000),
    });
    const srv = await startHttpsTestServer(expired);
    servers.push(srv);
    const outbound = await client();
    const err = await failureOf(outbound.request({ method: 'GET', url: url(srv) }));
    expect(err.detail).toBe('The destination certificate is expired or not yet valid.');
  });

  it('reports a closed port as 502 connection_failed', async () => {
    const srv = await server();
    const port = srv.port;
    await srv.close();
    servers.splice(servers.indexOf(srv), 1);
    const outbound = await client();
    const err = await failureOf(outbound.request({ method: 'GET', url: `https://${TEST_HOST}:${port}/` }));
    expect([err.failure, err.status, err.code]).toEqual(['connection_failed', 502, 'ECONNREFUSED']);
  });

  it('reports a connection reset mid-response as a failure of the body stream', async () => {
    const srv = await server((req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('start', () => req.socket.destroy());
    });
    const outbound = await client();
    const response = await outbound.request({ method: 'GET', url: url(srv) });
    const err = await failureOf(readAll(response.body));
    expect(err.status).toBe(502);
  });

  it('with loopback not allowed, refuses the test host before connecting', async () => {
    const srv = await server();
    const connector = forbiddenConnector();
    const outbound = await client({ PROXY_ALLOW_LOOPBACK: 'false' }, { connector });
    const err = await failureOf(outbound.request({ method: 'GET', url: url(srv) }));
    expect([err.failure, err.status]).toEqual(['destination_refused', 400]);
    expect(err.detail).toBe(
      'The destination is not allowed: its host name does not resolve to a public address.',
    );
    expect(connector).not.toHaveBeenCalled();
    expect(srv.connections).toBe(0);
  });

  it('with loopback not allowed and the real connector, the server sees no connection', async () => {
    const srv = await server();
    const outbound = await client({ PROXY_ALLOW_LOOPBACK: 'false' });
    expect((await failureOf(outbound.request({ method: 'GET', url: url(srv) }))).failure).toBe(
      'destination_refused',
    );
    expect(srv.connections).toBe(0);
  });

  it('refuses IP literals and localhost even when loopback is allowed (the server sees nothing)', async () => {
    const srv = await server();
    const outbound = await client();
    for (const target of [
      `https://127.0.0.1:${srv.port}/`,
      `https://2130706433:${srv.port}/`,
      `https://0x7f.1:${srv.port}/`,
      `https://0177.0.0.1:${srv.port}/`,
      `https://127.1:${srv.port}/`,
      `https://[::1]:${srv.port}/`,
      `https://[::ffff:127.0.0.1]:${srv.port}/`,
      `https://localhost:${srv.port}/`,
      `https://LOCALHOST.:${srv.port}/`,
      `https://a@127.0.0.1:${srv.port}/`,
      `https://a@${TEST_HOST}:${srv.port}/`,
      `http://${TEST_HOST}:${srv.port}/`,
    ]) {
      expect([target, (await failureOf(outbound.request({ method: 'GET', url: target }))).failure]).toEqual([
        target,
        'destination_refused',
      ]);
    }
    expect(srv.connections).toBe(0);
  });
});
