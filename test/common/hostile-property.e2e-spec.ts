import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { Response } from 'supertest';
import { HOSTILE_TEMPLATES } from '../../src/expressions/hostile-templates';
import {
  bodySchemaOf,
  bodyWith,
  deepBody,
  MemberPath,
  memberPaths,
  OpenApiDocument,
  sampleOf,
  STACK_TRACE,
} from '../support/hostile-input';
import { encryptTo, headerOf, withHeader } from '../support/client-encryption';
import { echoHandler, TestHandler, TestHttpsServer } from '../support/https-test-server';
import { hostileMultipart } from '../support/hostile-multipart';
import { forbiddenConnector } from '../support/outbound';
import { expectProxyError, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { newReactor } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';
import { ALL_TOKEN_PERMISSIONS, tokenApp } from '../support/token-factory';

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

const spec = JSON.parse(readFileSync(join(__dirname, '../../openapi.json'), 'utf8')) as OpenApiDocument;
/** Every operation; DELETE /tenants/self last, since with the management key it ends the test's tenant. */
const OPERATIONS: Operation[] = Object.entries(spec.paths)
  .flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => ({ method: method as Operation['method'], path })),
  )
  .sort((a, b) => Number(endsTenant(a)) - Number(endsTenant(b)));

function endsTenant(op: Operation): boolean {
  return op.method === 'delete' && op.path === '/tenants/self';
}

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

/**
 * JWEs made with a client encryption key of the sweep's tenant (set in beforeAll), holding the secret: one that
 * decrypts, one tampered with, one with a zip header, one with another alg. Generated as `encrypted` and
 * everywhere else a string goes; `clientKeyId` is the key's id, for /keys/{id}.
 */
let clientJwes: string[] = [];
let clientKeyId = '';
const clientJwe = fc.nat({ max: 3 }).map((i) => clientJwes[i] ?? SECRET);

/** Hostile strings for bodies: the above, huge, expressions that loop, header injection. */
const hostileString = fc.oneof(
  clientJwe,
  fc.constant(SECRET),
  fc.string({ maxLength: 30 }),
  fc.constant('x'.repeat(100_000)),
  fc.constant('\u0000'),
  fc.constant('{{ data | stringify }}'),
  fc.constant('{% for i in (1..100000000) %}x{% endfor %}'),
  fc.constantFrom(...HOSTILE_TEMPLATES),
  fc.constant('{{ data.number | split: "" | join: "-" }}'),
  fc.constant('../../etc/passwd'),
  fc.constant('__proto__'),
  fc.constant(`${SECRET}\r\nX-Injected: 1`),
  // Look-alike and folding e-mail addresses (KELVIN SIGN, Cyrillic, fullwidth, a small @ that folds to @).
  fc.constantFrom(
    'vic@ban\u212A.example',
    'v\u0456c@bank.example',
    '\uFF56\uFF49\uFF43@bank.example',
    'vic\uFE6B@bank.example',
    'vic@xn--bnk-6cd.example',
  ),
  // A name that would be a phishing line in an e-mail.
  fc.constant('Team\r\nLog in at https://evil.example/\u202E'),
  fc.constant('Acme\r\n\r\nReset your password at https://evil.example/\u202e\u200b'),
);

/** A name the vault answers with still carrying control or format characters (they reach e-mails and logs). */
const UNPLAIN_NAME = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** A 200 KB token of the tenant (set in beforeAll): bodies that reference it 60 times expand to 12 MB. */
let bigTokenId = '';
const EXPANDING_REFERENCES = 60;

function expandingBody(): string {
  const reference = `{{ ${bigTokenId} }}`;
  const refs = Array.from({ length: EXPANDING_REFERENCES }, () => reference);
  return JSON.stringify({ args: { refs: refs.join('') }, refs, data: reference });
}

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
      fc.oneof(hostileString, fc.constantFrom('type', 'data', 'name', 'email', 'page', 'size', 'args')),
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
  fc.constant('['.repeat(200_000) + `"{{ ${SECRET} }}"` + ']'.repeat(200_000)),
  fc.constant(null).map(expandingBody),
  fc.constant(`{"data": "${SECRET}", "name": "\\u0000"`),
  fc.constant('{"page": {"toString": "x"}, "size": null, "query": "metadata.k:\\ud800"}'),
  fc.constant(`[${Array.from({ length: 50_000 }, () => '1').join(',')}]`),
  // /tokenize: a definition whose data nests 5,000 deep, more tokens than allowed before a deep tail
  fc.constant(`{"card":{"type":"token","data":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}}`),
  fc.constant(
    `{"leaves":[${Array.from({ length: 101 }, () => '"x"').join(',')}],"later":${'['.repeat(5000)}${']'.repeat(5000)}}`,
  ),
  // deduplicating writes of the secret into a permitted and a forbidden container at once
  fc.constant(
    `[{"type":"card","data":{"number":"${SECRET}"},"containers":["/general/","/pci/high/"],"deduplicate_token":true}]`,
  ),
);

/** Nesting a few hundred deep (past every walk's limit), and a few thousand (past JSON.stringify's stack). */
const NESTING = fc.oneof(fc.integer({ min: 100, max: 800 }), fc.constant(5_000));

/** Bodies made from the operation's schema: null in optional members, or a member (or the whole body) nested deep. */
function schemaBodies(op: Operation): fc.Arbitrary<string> {
  const schema = bodySchemaOf(spec, op.path, op.method) ?? {};
  const members = memberPaths(spec, schema);
  const optional = members.filter(([, isOptional]) => isOptional).map(([path]) => path);
  const deep = fc
    .tuple(
      fc.constantFrom<MemberPath>([], ...members.map(([path]) => path)),
      fc.constantFrom<'array' | 'object'>('array', 'object'),
      NESTING,
      fc.constantFrom<unknown>(SECRET, `{{ ${SECRET} }}`, null, 1),
    )
    .map(([path, kind, levels, leaf]) => deepBody(spec, schema, path, kind, levels, leaf));
  if (optional.length === 0) {
    return deep;
  }
  const nulls = fc
    .subarray(optional, { minLength: 1 })
    .map((paths) =>
      JSON.stringify(
        paths.reduce((body, path) => bodyWith(spec, schema, path, null, body), sampleOf(spec, schema)),
      ),
    );
  return fc.oneof(deep, nulls);
}

const DOCUMENTS = ['documents:create', 'documents:read', 'documents:delete'] as const;

/** Multipart routes (uploads) get hostile multipart bodies too, not only bodies of other types. */
function isMultipart(op: Operation): boolean {
  return spec.paths[op.path]?.[op.method]?.requestBody?.content?.['multipart/form-data'] !== undefined;
}

const contentType = fc.constantFrom(
  'application/json',
  'application/merge-patch+json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'application/json; charset=latin1',
);

/**
 * Response headers that would act on the vault's origin, which the echo destination sends back when
 * asked (X-Answer-Headers): /proxy must drop them, or answer with its own values (the ones below).
 */
const OWN_HEADERS: Record<string, RegExp> = {
  'content-security-policy': /^sandbox; default-src 'none'/,
  'x-content-type-options': /^nosniff$/,
  'x-frame-options': /^DENY$/,
  'referrer-policy': /^no-referrer$/,
};
const answerHeaders = fc.array(
  fc
    .tuple(
      fc.constantFrom(
        'Set-Cookie',
        'Access-Control-Allow-Origin',
        'Access-Control-Allow-Credentials',
        'Content-Security-Policy',
        'Content-Security-Policy-Report-Only',
        'X-Content-Type-Options',
        'X-Frame-Options',
        'Referrer-Policy',
        'Clear-Site-Data',
        'Service-Worker-Allowed',
        'Refresh',
        'Permissions-Policy',
        'Cross-Origin-Opener-Policy',
        'Strict-Transport-Security',
        'Alt-Svc',
      ),
      fc.boolean(),
      fc.constantFrom(
        '*',
        'a=1; Path=/',
        '"*"',
        '0; url=https://attacker.example/',
        "script-src 'unsafe-inline'",
      ),
    )
    .map(([name, upper, value]): [string, string] => [upper ? name.toUpperCase() : name, value]),
  { maxLength: 4 },
);

/** The echo destination, answering also with the headers the request lists in X-Answer-Headers. */
const answeringEcho: TestHandler = (req, res, body) => {
  const asked = req.headers['x-answer-headers'];
  for (const [name, value] of typeof asked === 'string' ? (JSON.parse(asked) as [string, string][]) : []) {
    const before = res.getHeader(name);
    res.setHeader(name, before === undefined ? value : [String(before), value].flat());
  }
  echoHandler(req, res, body);
};

/** Every answer is never sniffed; a relayed one is sandboxed and carries none of the asked headers. */
function headerFaults(res: Response, proxied: boolean, asked: [string, string][]): string[] {
  const faults = res.headers['x-content-type-options'] === 'nosniff' ? [] : ['no nosniff'];
  if (!proxied || res.headers['bt-proxy-destination-status'] === undefined) {
    return faults;
  }
  for (const name of [...asked.map(([n]) => n.toLowerCase()), 'content-security-policy']) {
    const own = OWN_HEADERS[name];
    const value = res.headers[name] as string | string[] | undefined;
    if (own === undefined ? value !== undefined : !own.test(String(value))) {
      faults.push(`relays ${name}: ${String(value)}`);
    }
  }
  return faults;
}

/** Stands for the id of a real reactor whose code returns a 15 MB result (in POST /reactors/{id}/react). */
const BIG_RESULT_REACTOR = 'big-result-reactor';
const pathParam = fc.oneof(
  fc.uuid(),
  urlString,
  fc.constant('%00'),
  fc.constant('..%2F..'),
  fc.constant(BIG_RESULT_REACTOR),
  fc.constant(null).map(() => clientKeyId),
);
/** X-Forwarded-For as a client could spoof it (the vault trusts 127.0.0.1 here, so it is walked). */
const forwardedFor = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('203.0.113.7', '6.6.6.6, 203.0.113.7', 'not-an-ip, ::1', '::ffff:10.0.0.1,,127.0.0.1'),
  fc.constant(Array.from({ length: 500 }, (_, i) => `10.0.${i % 256}.1`).join(', ')),
  urlString.map(headerSafe),
);

/** BT-IDEMPOTENCY-KEY: none, reused across runs (replays, mismatches), empty, too long, or generated. */
const idempotencyKey = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('retry-1', 'retry-1', '', ' padded ', 'k'.repeat(256), 'naïve-key', 'tab\there'),
  urlString.map(headerSafe),
);

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
  const name: unknown = res.status < 300 ? (res.body as { name?: unknown } | undefined)?.name : undefined;
  if (typeof name === 'string' && UNPLAIN_NAME.test(name)) {
    faults.push('a name with control characters');
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

/**
 * Reads any answer as text, and as JSON when it is JSON: /proxy relays what the echo destination received
 * (invalid JSON declared as JSON included), which the client's own JSON parser would throw on.
 */
// superagent types the stream as its Response; at this point it is the IncomingMessage.
function lenientJson(stream: unknown, done: (err: Error | null, body: unknown) => void): void {
  const res = stream as IncomingMessage & { text?: string };
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => (text += chunk));
  res.on('end', () => {
    res.text = text;
    let body: unknown = {};
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: the body stays empty, the text is checked as it is.
    }
    done(null, body);
  });
}

/** Who sends a route's requests: a public key too where only one gets past the service's first check. */
function callersOf(op: Operation): ('management' | 'private' | 'public' | 'none')[] {
  return op.path.startsWith('/sessions')
    ? ['management', 'private', 'public', 'none']
    : ['management', 'private', 'none'];
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
  /** For the routes only a public key reaches (creating a session). */
  let publicKey: string;
  let bigResultReactorId: string;

  beforeAll(async () => {
    // /proxy gets a real destination: an HTTPS echo server on 127.0.0.1 behind a test host name.
    fx = await proxyFixture({ env: { TRUST_PROXY: '127.0.0.1,::1' } });
    ctx = fx.ctx;
    echo = await fx.server(answeringEcho);
    tenant = await ctx.newTenant();
    const app = await tokenApp(
      ctx,
      tenant,
      [],
      [
        'token:create',
        'token:read',
        'token:use',
        'token:search',
        'token-intent:create',
        'token-intent:read',
        'token-intent:delete',
        ...DOCUMENTS,
      ],
    );
    privateKey = app.key;
    publicKey = (await ctx.newApplication(tenant, 'public', ['token:create'])).key;
    const big = await app.api.create({ type: 'token', data: 'x'.repeat(200_000) });
    expect(big.status).toBe(201);
    bigTokenId = big.body.id as string;
    const key = await ctx.http.post('/keys').set('BT-API-KEY', tenant.key).send({});
    clientKeyId = key.body.key_id as string;
    const jwe = await encryptTo(key.body.public_key_pem as string, clientKeyId, SECRET);
    const [head, , iv, text, tag] = jwe.split('.');
    clientJwes = [
      jwe,
      [head, '', iv, text.split('').reverse().join(''), tag].join('.'),
      withHeader(jwe, { ...headerOf(jwe), zip: 'DEF' }),
      await encryptTo(key.body.public_key_pem as string, clientKeyId, SECRET, { alg: 'ECDH-ES+A256KW' }),
    ];
    bigResultReactorId = (
      await newReactor(ctx, tenant, {
        code: "module.exports = async () => ({ raw: 'x'.repeat(15 * 1024 * 1024) });",
        request_parameters: [],
      })
    ).reactorId;
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
            fc.oneof(rawBody, schemaBodies(op)),
            contentType,
            isMultipart(op)
              ? fc.option(hostileMultipart(hostileString), { nil: undefined })
              : fc.constant(undefined),
            fc.constantFrom(...callersOf(op)),
            fc.oneof(fc.constant('echo'), urlString),
            answerHeaders,
            forwardedFor,
            idempotencyKey,
            async (param, query, body, type, multipart, who, destination, asked, forwarded, idempotency) => {
              const proxied = op.path === '/proxy' || op.path.startsWith('/proxy/');
              const id =
                param === BIG_RESULT_REACTOR && op.path === '/reactors/{id}/react'
                  ? bigResultReactorId
                  : param;
              const url =
                op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(id)) +
                (Object.keys(query).length > 0 ? `?${new URLSearchParams(query).toString()}` : '');
              let req = ctx.http[op.method](url);
              if (forwarded !== undefined) {
                req = req.set('X-Forwarded-For', forwarded);
              }
              if (who !== 'none') {
                req = req.set(
                  'BT-API-KEY',
                  { management: tenant.key, private: privateKey, public: publicKey }[who],
                );
              }
              if (idempotency !== undefined) {
                req = req.set('BT-IDEMPOTENCY-KEY', idempotency);
              }
              if (proxied) {
                req = req
                  .set('X-Answer-Headers', JSON.stringify(asked))
                  .set('BT-PROXY-URL', destination === 'echo' ? fx.url(echo) : headerSafe(destination));
              }
              const sent =
                op.method === 'get'
                  ? req
                  : multipart !== undefined
                    ? req.set('Content-Type', multipart.type).send(multipart.body)
                    : req.set('Content-Type', type).send(body);
              const res = await sent.buffer(true).parse(lenientJson);
              const faults = [...faultsOf(res, proxied), ...headerFaults(res, proxied, asked)];
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

/** One request of the sweep below: a label and the JSON text of its body. */
type SweepBody = [string, string];

/** Every optional member null, one at a time and all at once; the body and each top-level member nested deep. */
function sweepBodies(op: Operation): SweepBody[] {
  const schema = bodySchemaOf(spec, op.path, op.method);
  const bodies: SweepBody[] = [];
  if (schema !== undefined) {
    const optional = memberPaths(spec, schema)
      .filter(([, isOptional]) => isOptional)
      .map(([path]) => path);
    for (const path of optional) {
      bodies.push([`${path.join('.')} null`, JSON.stringify(bodyWith(spec, schema, path, null))]);
    }
    const allNull = optional.reduce(
      (body, path) => bodyWith(spec, schema, path, null, body),
      sampleOf(spec, schema),
    );
    bodies.push(['every optional member null', JSON.stringify(allNull)]);
  }
  if (op.method !== 'get') {
    const topLevel = memberPaths(spec, schema ?? {}).filter(([path]) => path.length === 1);
    for (const [path] of [[[]] as [MemberPath], ...topLevel]) {
      for (const kind of ['array', 'object'] as const) {
        for (const levels of [300, 5_000]) {
          bodies.push([
            `${path.join('.') || 'the body'} as ${kind}s ${levels} deep`,
            deepBody(spec, schema ?? {}, path, kind, levels, `{{ ${SECRET} }}`),
          ]);
        }
      }
    }
  }
  return bodies;
}

describe('null in every optional member and nesting hundreds deep, over every route of openapi.json', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let privateKey: string;
  let publicKey: string;
  /** Real resources for the {id} of updates and invocations, so the bodies reach the services. */
  const ids = new Map<string, string>();

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    const app = await tokenApp(
      ctx,
      tenant,
      [],
      [...ALL_TOKEN_PERMISSIONS, 'token:search', 'token:use', ...DOCUMENTS],
    );
    privateKey = app.key;
    publicKey = (await ctx.newApplication(tenant, 'public', ['token:create'])).key;
    const token = await app.api.create({ type: 'token', data: 'x' });
    const { formulaId, reactorId } = await newReactor(ctx, tenant);
    // Its own application: the sweep's updates rewrite the permissions of the one they are sent to.
    ids.set('/applications/{id}', (await ctx.newApplication(tenant, 'private', ['token:read'])).id);
    ids.set('/tokens/{id}', token.body.id as string);
    ids.set('/reactor-formulas/{id}', formulaId);
    ids.set('/reactors/{id}', reactorId);
  });
  afterAll(() => ctx.close());

  /** The id for the path: a real one where the operation updates or invokes it, else an unknown uuid. */
  function urlOf(op: Operation): string {
    const real = op.method === 'put' || op.method === 'patch' || /\/react(-async)?$/.test(op.path);
    return op.path.replace(/\{[^}]+\}/g, (param, at: number) => {
      const known = ids.get(op.path.slice(0, at) + param);
      return real && known !== undefined ? known : '6f1c9a52-1b7e-4c8e-9d7a-3c2b1a0f9e8d';
    });
  }

  it.each(OPERATIONS.map((o) => [`${o.method.toUpperCase()} ${o.path}`, o]))(
    '%s',
    async (_name, operation) => {
      const op = operation;
      const proxied = op.path === '/proxy' || op.path.startsWith('/proxy/');
      const type = op.method === 'patch' && !proxied ? 'application/merge-patch+json' : 'application/json';
      const offenders: string[] = [];
      for (const [label, body] of sweepBodies(op)) {
        // The management key first; a key refused for the route is retried with the private, then the public key.
        for (const key of [tenant.key, privateKey, publicKey]) {
          const res = await ctx.http[op.method](urlOf(op))
            .set('BT-API-KEY', key)
            .set('Content-Type', type)
            .send(body)
            .buffer(true)
            .parse(lenientJson);
          const faults = faultsOf(res, proxied);
          if (faults.length > 0) {
            offenders.push(`${label}: ${faults.join(', ')}`);
          }
          if (res.status !== 401 && res.status !== 403) {
            break;
          }
        }
      }
      expect(offenders).toEqual([]);
    },
  );
});

describe('generated hostile scrapes of /metrics: never to a tenant key, always the 404 of a missing path', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  const TOKEN = 'operator-metrics-token-for-the-property-test';

  beforeAll(async () => {
    ctx = await TestContext.create({ env: { METRICS_TOKEN: TOKEN } });
    tenant = await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  it('answers 404 to every Authorization and BT-API-KEY but the operator token', async () => {
    const missing = (await ctx.http.get('/no-such-path')).body as unknown;
    const authorization = fc.oneof(
      urlString,
      fc.constantFrom(tenant.key, `Bearer ${tenant.key}`, `Bearer ${TOKEN.toUpperCase()}`, `Basic ${TOKEN}`),
      fc.constantFrom(`Bearer ${TOKEN.slice(1)}`, `Bearer ${TOKEN} ${TOKEN}`, `Bearer\t${TOKEN}`, TOKEN),
    );
    await fc.assert(
      fc.asyncProperty(authorization, fc.boolean(), queryPart, async (auth, withKey, query) => {
        let req = ctx.http.get(`/metrics?${new URLSearchParams(query).toString()}`);
        req = req.set('Authorization', headerSafe(auth));
        if (withKey) {
          req = req.set('BT-API-KEY', tenant.key);
        }
        const res = await req;
        expect([res.status, res.body]).toEqual([404, missing]);
        expect(res.text).not.toContain('token_vault_');
      }),
      { numRuns: RUNS * 4, seed: SEED },
    );
  });
});

describe('generated internal names through /proxy: one answer whatever they resolve to', () => {
  const connector = forbiddenConnector();
  // Internal names as a hostile tenant would guess them, each resolving somewhere no test may connect to.
  const answers: [string, string | string[]][] = [
    ['db', '10.1.2.3'],
    ['cache', '192.168.7.7'],
    ['meta', '169.254.169.254'],
    ['lo', '127.0.0.1'],
    ['v6', 'fd00::7'],
    ['mixed', ['93.184.216.34', '10.0.0.9']],
  ];
  const names = Object.fromEntries(answers.map(([name, address]) => [`${name}.corp.test`, address]));
  let fx: ProxyFixture;
  let key: string;

  beforeAll(async () => {
    fx = await proxyFixture({ allowLoopback: false, names, connector });
    key = (await tokenApp(fx.ctx, await fx.ctx.newTenant(), [], ['token:use'])).key;
  });
  afterAll(() => fx.close());

  it('refuses names resolving to internal addresses and names that do not resolve alike', async () => {
    const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}[a-z0-9]$/);
    const host = fc.oneof(
      fc.constantFrom(...Object.keys(names)),
      label.map((l) => `${l}.corp.test`),
      fc.tuple(label, label).map(([a, b]) => `${a}.${b}.example`),
    );
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(host, urlString, fc.constantFrom('get', 'post'), async (name, path, method) => {
        const res = await fx.ctx.http[method]('/proxy')
          .set('BT-API-KEY', key)
          .set('BT-PROXY-URL', `https://${name}/${encodeURIComponent(path)}`);
        seen.add(JSON.stringify([res.status, expectProxyError(res, 400)]));
      }),
      { numRuns: RUNS * 4, seed: SEED },
    );
    expect([...seen]).toHaveLength(1);
    expect(JSON.parse([...seen][0])).toMatchObject([
      400,
      { detail: 'The destination is not allowed: its host name does not resolve to a public address.' },
    ]);
    expect(connector).not.toHaveBeenCalled();
  });
});
