import type { Response } from 'supertest';
import type { DatabaseRuntime } from '../../src/database/database';
import { OUTBOUND_CONNECTOR, OUTBOUND_RESOLVER, OutboundConnector } from '../../src/outbound';
import { startHttpsTestServer, TestHandler, TestHttpsServer } from './https-test-server';
import { staticResolver, TEST_HOST } from './outbound';
import { ProviderOverride } from './overrides';
import { TestContext, TestTenant } from './test-app';
import { createTestCa, TestCa } from './test-pki';

/**
 * A vault whose outbound client trusts a CA made by the test and resolves test host names to 127.0.0.1
 * only (never real DNS), and HTTPS servers on 127.0.0.1 with that CA's certificates.
 */
export interface ProxyFixture {
  ctx: TestContext;
  ca: TestCa;
  /** Starts an HTTPS server for TEST_HOST (or `names`); closed by close(). */
  server(handler?: TestHandler, names?: string[]): Promise<TestHttpsServer>;
  /** https://TEST_HOST:<port><path> */
  url(server: TestHttpsServer, path?: string): string;
  close(): Promise<void>;
}

export interface ProxyFixtureOptions {
  /** PROXY_ALLOW_LOOPBACK: true unless a test checks the guard with loopback refused. */
  allowLoopback?: boolean;
  /** PROXY_CA_FILE set to the test CA (default true). */
  trustCa?: boolean;
  /** Names → addresses for the resolver, on top of TEST_HOST → 127.0.0.1. */
  names?: Record<string, string | string[]>;
  connector?: OutboundConnector;
  /** More test doubles (a TestClock). */
  overrides?: ProviderOverride[];
  env?: Record<string, string>;
  /** A database the test runs itself (see TestContext.create). */
  database?: DatabaseRuntime;
}

export async function proxyFixture(options: ProxyFixtureOptions = {}): Promise<ProxyFixture> {
  const ca = createTestCa();
  const overrides: ProviderOverride[] = [
    { provide: OUTBOUND_RESOLVER, useValue: staticResolver({ [TEST_HOST]: '127.0.0.1', ...options.names }) },
  ];
  if (options.connector !== undefined) {
    overrides.push({ provide: OUTBOUND_CONNECTOR, useValue: options.connector });
  }
  overrides.push(...(options.overrides ?? []));
  const ctx = await TestContext.create({
    env: {
      PROXY_ALLOW_LOOPBACK: String(options.allowLoopback ?? true),
      ...(options.trustCa === false ? {} : { PROXY_CA_FILE: ca.file }),
      SANDBOX_WORKERS: '1',
      SANDBOX_TIMEOUT_MS: '3000',
      ...options.env,
    },
    overrides,
    database: options.database,
  });
  const servers: TestHttpsServer[] = [];
  return {
    ctx,
    ca,
    async server(handler, names = [TEST_HOST]) {
      const started = await startHttpsTestServer(ca.issue(names), handler);
      servers.push(started);
      return started;
    },
    url: (server, path = '') => `https://${TEST_HOST}:${server.port}${path}`,
    async close() {
      await Promise.all(servers.map((s) => s.close()));
      await ctx.close();
      ca.dispose();
    },
  };
}

/** POST /proxies with the tenant's management key; fails the test unless created. */
export async function createProxy(
  ctx: TestContext,
  tenant: TestTenant,
  body: Record<string, unknown>,
): Promise<{ id: string; key: string }> {
  const res = await ctx.http
    .post('/proxies')
    .set('BT-API-KEY', tenant.key)
    .send({ name: 'Test proxy', ...body });
  expect([res.status, res.body]).toEqual([201, expect.objectContaining({ key: expect.any(String) })]);
  return { id: res.body.id as string, key: res.body.key as string };
}

/** POST /proxy through the configured proxy `proxyKey`, as the application `callerKey`, with a JSON body. */
export function callConfiguredProxy(ctx: TestContext, callerKey: string, proxyKey: string, body: unknown) {
  return ctx.http
    .post('/proxy')
    .set('BT-API-KEY', callerKey)
    .set('BT-PROXY-KEY', proxyKey)
    .send(body as object);
}

/** Asserts `{ proxy_error: <problem details> }` with this status, and returns the problem. */
export function expectProxyError(res: Response, status: number): Record<string, unknown> {
  expect({ status: res.status, body: res.body }).toMatchObject({
    status,
    body: { proxy_error: { status, title: expect.any(String), detail: expect.any(String) } },
  });
  expect(Object.keys(res.body)).toEqual(['proxy_error']);
  return res.body.proxy_error as Record<string, unknown>;
}

/** The headers the echo server received (its x-echo-headers). */
export function echoedHeaders(res: Response): Record<string, string> {
  return JSON.parse(String(res.headers['x-echo-headers'])) as Record<string, string>;
}
