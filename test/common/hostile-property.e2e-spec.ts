import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Response } from 'supertest';
import { STACK_TRACE } from '../support/hostile-input';
import { TestHttpsServer } from '../support/https-test-server';
import { ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TestContext, TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

/**
 * Generated hostile requests against every route of openapi.json: no 5xx, problem-details bodies for
 * errors, bounded error size, and no echo of a secret. `npm test` runs a few per route with a fixed
 * seed; FC_RUNS=500 FC_SEED=<n> npm test -- hostile-property runs a larger one on demand.
 */
const RUNS = Number(process.env.FC_RUNS ?? 8);
const SEED = Number(process.env.FC_SEED ?? 20261123);
const SECRET = '4111111111111111';
const MAX_ERROR_BYTES = 16_384;

interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
}

const spec = JSON.parse(readFileSync(join(__dirname, '../../openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, unknown>>;
};
const OPERATIONS: Operation[] = Object.entries(spec.paths).flatMap(([path, methods]) =>
  Object.keys(methods).map((method) => ({ method: method as Operation['method'], path })),
);

/** Hostile strings that fit in a URL: the secret, control characters, expressions, traversal. */
const urlString = fc.oneof(
  fc.constant(SECRET),
  fc.string({ maxLength: 30 }),
  fc.constant('\u0000'),
  fc.constant('{{ data | stringify }}'),
  fc.constant('../../etc/passwd'),
  fc.constant('__proto__'),
  fc.constant('x'.repeat(2000)),
);

/** Hostile strings for bodies: the above, huge, expressions that loop, header injection. */
const hostileString = fc.oneof(
  fc.constant(SECRET),
  fc.string({ maxLength: 30 }),
  fc.constant('x'.repeat(100_000)),
  fc.constant('\u0000'),
  fc.constant('{{ data | stringify }}'),
  fc.constant('{% for i in (1..100000000) %}x{% endfor %}'),
  fc.constant('../../etc/passwd'),
  fc.constant('__proto__'),
  fc.constant(`${SECRET}\r\nX-Injected: 1`),
);

const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(hostileString, fc.constantFrom('type', 'data', 'name', 'page', 'size', 'args')),
      tie('value'),
      {
        maxKeys: 4,
      },
    ),
  ),
})).value;

/** Raw bodies JSON.stringify cannot make: duplicate keys, lone surrogates, deep nesting, bad encodings. */
const rawBody = fc.oneof(
  hostileValue.map((v) => JSON.stringify(v) ?? 'null'),
  fc.constant(`{"type":"token","type":"card","data":{"number":"${SECRET}"}}`),
  fc.constant('{"type":"token","data":"\\ud800","metadata":{"\\udc00":"x"}}'),
  fc.constant('['.repeat(5000) + ']'.repeat(5000)),
  fc.constant(`{"data": "${SECRET}", "name": "\\u0000"`),
  fc.constant('{"page": {"toString": "x"}, "size": null, "query": "metadata.k:\\ud800"}'),
  fc.constant(`[${Array.from({ length: 50_000 }, () => '1').join(',')}]`),
);

const contentType = fc.constantFrom(
  'application/json',
  'application/merge-patch+json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'application/json; charset=latin1',
);

const pathParam = fc.oneof(fc.uuid(), urlString, fc.constant('%00'), fc.constant('..%2F..'));
const queryPart = fc.dictionary(
  fc.constantFrom('page', 'size', 'id', 'type', 'name', 'metadata.k', 'x'),
  urlString,
  {
    maxKeys: 3,
  },
);

/** The error body must be problem details, or on /proxy `{ proxy_error: <problem details> }`. */
function misshapenError(res: Response, proxied: boolean): string | null {
  if (proxied) {
    const status = (res.body as { proxy_error?: { status?: unknown } } | undefined)?.proxy_error?.status;
    return status === res.status ? null : 'not a proxy_error body';
  }
  const problemType = /^application\/problem\+json/.test(res.headers['content-type'] ?? '');
  return problemType && res.body?.status === res.status ? null : 'not a problem-details body';
}

function faultsOf(res: Response, proxied: boolean): string[] {
  // The destination's own answers are relayed as they are: not ours to judge.
  if (proxied && res.headers['bt-proxy-destination-status'] !== undefined) {
    return [];
  }
  const faults: string[] = [];
  if (res.status >= 500) {
    faults.push(`status ${res.status}`);
  }
  if (STACK_TRACE.test(res.text)) {
    faults.push('stack trace');
  }
  if (res.status >= 400) {
    const shape = misshapenError(res, proxied);
    if (shape !== null) {
      faults.push(shape);
    }
    if (res.text.length > MAX_ERROR_BYTES) {
      faults.push(`error body of ${res.text.length} bytes`);
    }
    if (res.text.includes(SECRET)) {
      faults.push('echoes the secret');
    }
  }
  return faults;
}

/** A header value the HTTP client can send (no control characters): the server's checks are the subject. */
function headerSafe(value: string): string {
  return [...value].map((c) => (c >= ' ' && c < '\u007f' ? c : '?')).join('');
}

describe('generated hostile requests over every route of openapi.json', () => {
  let fx: ProxyFixture;
  let ctx: TestContext;
  let echo: TestHttpsServer;
  let tenant: TestTenant;
  let privateKey: string;

  beforeAll(async () => {
    // /proxy gets a real destination: an HTTPS echo server on 127.0.0.1 behind a test host name.
    fx = await proxyFixture();
    ctx = fx.ctx;
    echo = await fx.server();
    tenant = await ctx.newTenant();
    privateKey = (
      await tokenApp(ctx, tenant, [], ['token:create', 'token:read', 'token:use', 'token:search'])
    ).key;
  });
  afterAll(() => fx.close());

  it('covers every route of the document', () => {
    expect(OPERATIONS.length).toBeGreaterThanOrEqual(25);
  });

  it.each(OPERATIONS.map((o) => [`${o.method.toUpperCase()} ${o.path}`, o]))(
    '%s',
    async (_name, operation) => {
      const op = operation;
      let failure: string | undefined;
      await fc
        .assert(
          fc.asyncProperty(
            pathParam,
            queryPart,
            rawBody,
            contentType,
            fc.constantFrom('management', 'private', 'none'),
            fc.oneof(fc.constant('echo'), urlString),
            async (param, query, body, type, who, destination) => {
              const proxied = op.path === '/proxy' || op.path.startsWith('/proxy/');
              const url =
                op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(param)) +
                (Object.keys(query).length > 0 ? `?${new URLSearchParams(query).toString()}` : '');
              let req = ctx.http[op.method](url);
              if (who !== 'none') {
                req = req.set('BT-API-KEY', who === 'management' ? tenant.key : privateKey);
              }
              if (proxied) {
                req = req.set(
                  'BT-PROXY-URL',
                  destination === 'echo' ? fx.url(echo) : headerSafe(destination),
                );
              }
              const res = op.method === 'get' ? await req : await req.set('Content-Type', type).send(body);
              const faults = faultsOf(res, proxied);
              if (faults.length > 0) {
                failure = `${op.method.toUpperCase()} ${url.slice(0, 200)} as ${who} (${type}): ${faults.join(', ')}`;
                throw new Error(failure);
              }
            },
          ),
          { numRuns: RUNS, seed: SEED + op.path.length, endOnFailure: true },
        )
        .catch((err: unknown) => {
          // Counterexamples hold megabyte bodies: report the start of the failure and its cause only.
          const message = err instanceof Error ? err.message : String(err);
          throw new Error(failure ?? `${message.slice(0, 200)} … ${message.slice(-1500)}`);
        });
    },
  );
});
