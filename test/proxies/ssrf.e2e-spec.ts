import { Logger } from '@nestjs/common';
import { startHttpsTestServer, TestHttpsServer } from '../support/https-test-server';
import { forbiddenConnector, TEST_HOST } from '../support/outbound';
import { createProxy, expectProxyError, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TestTenant } from '../support/test-app';
import { selfSignedCertificate } from '../support/test-pki';
import { tokenApp } from '../support/token-factory';

/**
 * The SSRF corpus through /proxy. Real sockets go to 127.0.0.1 only: the loopback server counts the
 * connections it gets, and destinations on private, link-local or metadata addresses are decided with an
 * injected resolver and a connector that fails the test if it is ever called.
 */

async function callerOf(fx: ProxyFixture): Promise<{ tenant: TestTenant; key: string }> {
  const tenant = await fx.ctx.newTenant();
  const app = await tokenApp(fx.ctx, tenant, [], ['token:use']);
  return { tenant, key: app.key };
}

describe('SSRF: loopback refused, the real connector, a server on 127.0.0.1 that must see nothing', () => {
  let fx: ProxyFixture;
  let target: TestHttpsServer;
  let caller: { tenant: TestTenant; key: string };

  beforeAll(async () => {
    fx = await proxyFixture({ allowLoopback: false });
    target = await fx.server(undefined, [TEST_HOST, 'localhost']);
    caller = await callerOf(fx);
  });
  afterAll(() => fx.close());

  const corpus = (port: number): string[] => [
    `http://${TEST_HOST}:${port}/`,
    `https://127.0.0.1:${port}/`,
    `https://2130706433:${port}/`,
    `https://0x7f.1:${port}/`,
    `https://0x7f000001:${port}/`,
    `https://0177.0.0.1:${port}/`,
    `https://127.1:${port}/`,
    `https://127.0.1:${port}/`,
    `https://[::1]:${port}/`,
    `https://[::ffff:127.0.0.1]:${port}/`,
    `https://[::ffff:7f00:1]:${port}/`,
    `https://[0:0:0:0:0:0:0:1]:${port}/`,
    `https://0.0.0.0:${port}/`,
    `https://0:${port}/`,
    `https://[::]:${port}/`,
    `https://localhost:${port}/`,
    `https://LOCALHOST:${port}/`,
    `https://LocalHost.:${port}/`,
    `https://api.localhost:${port}/`,
    `https://a@127.0.0.1:${port}/`,
    `https://a:b@${TEST_HOST}:${port}/`,
    `https://${TEST_HOST}@127.0.0.1:${port}/`,
    `https://${TEST_HOST}:${port}/`,
    `https://${TEST_HOST.toUpperCase()}.:${port}/`,
    ` https://${TEST_HOST}:${port}/`,
    `https://${TEST_HOST}:${port}\\@127.0.0.1/`,
    `https:/${TEST_HOST}:${port}/`,
    `ftp://${TEST_HOST}:${port}/`,
    `//${TEST_HOST}:${port}/`,
    'not a url',
  ];

  it('has at least 25 cases', () => {
    expect(corpus(1).length).toBeGreaterThanOrEqual(25);
  });

  it('refuses every case with a proxy_error, and the server sees no connection', async () => {
    const outcomes: string[] = [];
    for (const url of corpus(target.port)) {
      const res = await fx.ctx.http
        .post('/proxy')
        .set('BT-API-KEY', caller.key)
        .set('BT-PROXY-URL', url)
        .send({});
      outcomes.push(`${res.status} ${url}`);
      expectProxyError(res, 400);
    }
    expect(outcomes.every((o) => o.startsWith('400'))).toBe(true);
    expect(target.connections).toBe(0);
  });

  it('refuses a configured proxy whose host resolves to loopback, at request time', async () => {
    const { key } = await createProxy(fx.ctx, caller.tenant, { destination_url: fx.url(target) });
    const res = await fx.ctx.http
      .post('/proxy')
      .set('BT-API-KEY', caller.key)
      .set('BT-PROXY-KEY', key)
      .send({});
    expectProxyError(res, 400);
    expect(target.connections).toBe(0);
  });
});

describe('SSRF: names resolving to private, link-local and metadata addresses (decided, never connected)', () => {
  const connector = forbiddenConnector();
  const names: Record<string, string | string[]> = {
    'ten.test': '10.0.0.1',
    'rfc1918-172.test': '172.16.5.4',
    'rfc1918-192.test': '192.168.1.1',
    'cgnat.test': '100.64.0.1',
    'metadata.test': '169.254.169.254',
    'ula.test': 'fd00::1',
    'ula-fc.test': 'fc00::5',
    'linklocal6.test': 'fe80::1',
    'mapped.test': '::ffff:10.0.0.1',
    'mapped-metadata.test': '::ffff:169.254.169.254',
    'unspecified.test': '0.0.0.0',
    'multicast.test': '224.0.0.1',
    'documentation.test': '192.0.2.10',
    'rebind.test': ['93.184.216.34', '10.0.0.1'],
    'loopback.test': '127.0.0.1',
  };
  let fx: ProxyFixture;
  let caller: { tenant: TestTenant; key: string };

  beforeAll(async () => {
    fx = await proxyFixture({ allowLoopback: false, names, connector });
    caller = await callerOf(fx);
  });
  afterAll(() => fx.close());

  it.each(Object.keys(names))('refuses %s with 400 proxy_error before connecting', async (name) => {
    const res = await fx.ctx.http
      .post('/proxy')
      .set('BT-API-KEY', caller.key)
      .set('BT-PROXY-URL', `https://${name}/v1`)
      .send({});
    const problem = expectProxyError(res, 400);
    expect(problem.detail).toMatch(/not allowed/);
    expect(connector).not.toHaveBeenCalled();
  });

  it('answers names resolving to 10.x, to metadata, to loopback and a name that does not resolve alike', async () => {
    const answers = new Set<string>();
    for (const name of ['ten.test', 'metadata.test', 'loopback.test', 'does-not-resolve.test']) {
      const res = await fx.ctx.http
        .post('/proxy')
        .set('BT-API-KEY', caller.key)
        .set('BT-PROXY-URL', `https://${name}/v1`)
        .send({});
      answers.add(JSON.stringify([res.status, expectProxyError(res, 400)]));
    }
    expect(answers.size).toBe(1);
    expect(JSON.parse([...answers][0])).toMatchObject([
      400,
      { detail: 'The destination is not allowed: its host name does not resolve to a public address.' },
    ]);
    expect(connector).not.toHaveBeenCalled();
  });

  it('logs which it was: a name that does not resolve, or one resolving to a refused address', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      for (const name of ['does-not-resolve.test', 'ten.test', 'metadata.test']) {
        const res = await fx.ctx.http
          .post('/proxy')
          .set('BT-API-KEY', caller.key)
          .set('BT-PROXY-URL', `https://${name}/v1`)
          .send({});
        expectProxyError(res, 400);
      }
      const logged = warn.mock.calls.filter(([, message]) => message === 'proxy destination failed');
      expect(logged.map(([fields]) => fields as Record<string, unknown>)).toEqual([
        expect.objectContaining({
          failure: 'destination_refused',
          code: 'ENOTFOUND',
          reason: 'the host name does not resolve (ENOTFOUND)',
        }),
        expect.objectContaining({ reason: 'the host name resolves to a refused address (private)' }),
        expect.objectContaining({ reason: 'the host name resolves to a refused address (metadata)' }),
      ]);
      expect(JSON.stringify(logged)).not.toContain(caller.key);
    } finally {
      warn.mockRestore();
    }
    expect(connector).not.toHaveBeenCalled();
  });
});

describe('SSRF: what a reachable destination cannot make the proxy do', () => {
  let fx: ProxyFixture;
  let caller: { tenant: TestTenant; key: string };
  const extra: TestHttpsServer[] = [];

  beforeAll(async () => {
    fx = await proxyFixture({ allowLoopback: true });
    caller = await callerOf(fx);
  });
  afterAll(async () => {
    await Promise.all(extra.map((s) => s.close()));
    await fx.close();
  });

  const send = (url: string) =>
    fx.ctx.http.get('/proxy').set('BT-API-KEY', caller.key).set('BT-PROXY-URL', url);

  it('returns a redirect to a loopback address to the caller instead of following it', async () => {
    const inner = await fx.server();
    const redirecting = await fx.server((_req, res) => {
      res.writeHead(302, { location: `https://127.0.0.1:${inner.port}/admin` });
      res.end();
    });
    const res = await send(fx.url(redirecting));
    expect([res.status, res.headers.location]).toEqual([302, `https://127.0.0.1:${inner.port}/admin`]);
    expect(inner.connections).toBe(0);
  });

  it('refuses a server that only speaks TLS 1.1 (502 proxy_error, no request reaches it)', async () => {
    const old = await startHttpsTestServer(fx.ca.issue([TEST_HOST]), undefined, {
      minVersion: 'TLSv1',
      maxVersion: 'TLSv1.1',
      ciphers: 'DEFAULT@SECLEVEL=0',
    });
    extra.push(old);
    const res = await send(fx.url(old));
    expect(expectProxyError(res, 502).detail).toMatch(/TLS/);
    expect(old.requests).toBe(0);
  });

  it('refuses a self-signed certificate that PROXY_CA_FILE does not vouch for', async () => {
    const selfSigned = await startHttpsTestServer(selfSignedCertificate([TEST_HOST]));
    extra.push(selfSigned);
    const res = await send(fx.url(selfSigned));
    expect(expectProxyError(res, 502).detail).toMatch(/certificate/);
    expect(selfSigned.requests).toBe(0);
  });

  it('answers 408 proxy_error when the destination does not answer within PROXY_TIMEOUT_MS', async () => {
    const slow = await proxyFixture({ env: { PROXY_TIMEOUT_MS: '300' } });
    try {
      const silent = await slow.server(() => undefined);
      const who = await callerOf(slow);
      const started = Date.now();
      const res = await slow.ctx.http
        .post('/proxy')
        .set('BT-API-KEY', who.key)
        .set('BT-PROXY-URL', slow.url(silent))
        .send({});
      expectProxyError(res, 408);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await slow.close();
    }
  });
});
