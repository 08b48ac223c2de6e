import type { Response } from 'supertest';
import { MetricsService } from '../../src/metrics/metrics.service';
import { auditRows, eventually } from '../support/audit';
import { TestHttpsServer } from '../support/https-test-server';
import { TEST_HOST } from '../support/outbound';
import { echoedHeaders, expectProxyError, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp } from '../support/token-factory';

/**
 * /proxy with BT-PROXY-URL against a real HTTPS echo server on 127.0.0.1: routing, paths, methods, headers,
 * raw responses, detokenization of JSON, form and text bodies, limits and permissions.
 */
describe('/proxy (ephemeral, BT-PROXY-URL)', () => {
  let fx: ProxyFixture;
  let echo: TestHttpsServer;
  let tenant: TestTenant;
  let caller: Awaited<ReturnType<typeof tokenApp>>;
  let card: { id: string; number: string };

  beforeAll(async () => {
    fx = await proxyFixture();
    echo = await fx.server();
    tenant = await fx.ctx.newTenant();
    caller = await tokenApp(fx.ctx, tenant, [], ['token:create', 'token:read', 'token:use']);
    const data = cardData();
    const created = await caller.api.create({ type: 'card', data });
    expect(created.status).toBe(201);
    card = { id: created.body.id as string, number: data.number };
  });
  afterAll(() => fx.close());

  const proxy = (method: 'get' | 'post' | 'put' | 'patch' | 'delete', path = '/proxy', base?: string) =>
    fx.ctx.http[method](path)
      .set('BT-API-KEY', caller.key)
      .set('BT-PROXY-URL', base ?? fx.url(echo));

  it('sends a JSON body with the card number in place of the expression, and returns the echo', async () => {
    const res = await proxy('post').send({
      number: `{{ ${card.id} | json: '$.number' }}`,
      card: `{{ ${card.id} }}`,
      note: 'plain',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      number: card.number,
      card: expect.objectContaining({ number: card.number, expiration_month: 12 }),
      note: 'plain',
    });
    expect(res.headers['bt-proxy-destination-status']).toBe('200');
    expect(res.headers['x-echo-method']).toBe('POST');
  });

  it('mixes plaintext and expressions in one string', async () => {
    const res = await proxy('post').send({ text: `card ${`{{ ${card.id} | json: '$.number' | last4 }}`}!` });
    expect(res.body).toEqual({ text: `card ${card.number.slice(-4)}!` });
  });

  it('detokenizes a form-urlencoded body, field by field', async () => {
    const form = new URLSearchParams({ number: `{{ ${card.id} | json: '$.number' }}`, amount: '10 USD' });
    const res = await proxy('post').type('form').send(form.toString());
    expect(res.status).toBe(200);
    expect(Object.fromEntries(new URLSearchParams(res.text))).toEqual({
      number: card.number,
      amount: '10 USD',
    });
  });

  it('detokenizes a text body', async () => {
    const res = await proxy('post')
      .set('Content-Type', 'text/plain')
      .send(`pan={{ ${card.id} | json: '$.number' }};cvc=none`);
    expect(res.text).toBe(`pan=${card.number};cvc=none`);
  });

  it('appends the path and query after /proxy to the destination base', async () => {
    const res = await proxy('get', '/proxy/v1/charges/ch_1?limit=2&expand=a%20b', fx.url(echo, '/api'));
    expect(res.status).toBe(200);
    expect(res.headers['x-echo-path']).toBe('/api/v1/charges/ch_1?limit=2&expand=a%20b');
    const bare = await proxy('get', '/proxy', fx.url(echo, '/api/?v=1'));
    expect(bare.headers['x-echo-path']).toBe('/api/?v=1');
  });

  it('refuses . and .. segments that would climb out of the base path', async () => {
    const before = echo.requests;
    for (const path of ['/proxy/../admin', '/proxy/a/%2e%2e/b', '/proxy/a/%2E%2e%2Fb']) {
      expectProxyError(await proxy('get', path, fx.url(echo, '/api')), 400);
    }
    expect(echo.requests).toBe(before);
  });

  it.each(['get', 'post', 'put', 'patch', 'delete'] as const)('forwards %s', async (method) => {
    const res = await proxy(method, '/proxy/x');
    expect(res.status).toBe(200);
    expect(res.headers['x-echo-method']).toBe(method.toUpperCase());
  });

  it('passes the caller headers, strips the vault and hop-by-hop ones, and passes or makes BT-TRACE-ID', async () => {
    const res = await proxy('post')
      .set('Authorization', 'Bearer partner-secret')
      .set('X-Idempotency-Key', 'abc')
      .set('Connection', 'keep-alive, X-Drop-Me')
      .set('X-Drop-Me', '1')
      .set('BT-TRACE-ID', 'trace-123')
      .send({ a: 1 });
    const seen = echoedHeaders(res);
    expect(seen).toMatchObject({ authorization: 'Bearer partner-secret', 'x-idempotency-key': 'abc' });
    expect(seen['bt-trace-id']).toBe('trace-123');
    for (const name of ['bt-api-key', 'bt-proxy-url', 'bt-proxy-key', 'x-drop-me', 'keep-alive']) {
      expect(seen).not.toHaveProperty(name);
    }
    const generated = await proxy('get');
    expect(echoedHeaders(generated)['bt-trace-id']).toEqual(generated.headers['bt-trace-id']);
    expect(generated.headers['bt-trace-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("returns the destination's status, headers and binary body untouched, but for its cookies", async () => {
    const bytes = Buffer.from([0, 255, 1, 254, 0x7b, 0x7b, 10, 13, 0]);
    const raw = await fx.server((_req, res) => {
      res.writeHead(418, 'Teapot', [
        'Content-Type',
        'application/octet-stream',
        'Set-Cookie',
        'a=1',
        'Set-Cookie',
        'b=2',
        'X-Partner',
        'yes',
        'X-Partner-Step',
        '1',
        'X-Partner-Step',
        '2',
      ]);
      res.end(bytes);
    });
    const res = await proxy('get', '/proxy', fx.url(raw))
      .buffer(true)
      .parse((r, done) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(res.status).toBe(418);
    expect(Buffer.compare(res.body as Buffer, bytes)).toBe(0);
    // Cookies would land on the vault's origin: never relayed (README, Security notes).
    expect(res.headers).not.toHaveProperty('set-cookie');
    expect(res.headers['x-partner']).toBe('yes');
    expect(res.headers['x-partner-step']).toBe('1, 2');
    expect(res.headers['bt-proxy-destination-status']).toBe('418');
  });

  it('sends a binary body byte for byte, without reading it for expressions', async () => {
    const bytes = Buffer.concat([Buffer.from(`{{ ${card.id} }}`), Buffer.from([0, 1, 2, 255])]);
    const res = await proxy('put')
      .set('Content-Type', 'application/octet-stream')
      .send(bytes)
      .buffer(true)
      .parse((r, done) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(Buffer.compare(res.body as Buffer, bytes)).toBe(0);
  });

  it('sends a body without expressions as it came', async () => {
    const text = '{ "spaced" :  [1, 2] }';
    const res = await proxy('post').set('Content-Type', 'application/json').send(text);
    expect(res.text).toBe(text);
  });

  it('detokenizes at most 100 tokens per request and sends nothing over the cap', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 101; i++) {
      ids.push(`tok_${i}_${Date.now()}`);
    }
    for (const batch of [ids.slice(0, 100), ids.slice(100)]) {
      const created = await caller.api.tokenize(batch.map((id) => ({ id, type: 'token', data: `v${id}` })));
      expect(created.status).toBe(200);
    }
    const before = echo.requests;
    const over = await proxy('post').send({ values: ids.map((id) => `{{ ${id} }}`) });
    expectProxyError(over, 400);
    expect(echo.requests).toBe(before);
    const atCap = await proxy('post').send({ values: ids.slice(0, 100).map((id) => `{{ ${id} }}`) });
    expect(atCap.status).toBe(200);
    expect((atCap.body as { values: string[] }).values[99]).toBe(`v${ids[99]}`);
  });

  it('answers 400 proxy_error for an unknown token and for invalid JSON with an expression', async () => {
    const unknown = await proxy('post').send({ n: '{{ no-such-token }}' });
    expectProxyError(unknown, 400);
    const invalid = await proxy('post').set('Content-Type', 'application/json').send('{"n": "{{ x }}"');
    expectProxyError(invalid, 400);
  });

  it('needs token:use: 403 proxy_error without the permission or without a rule granting it', async () => {
    const noUse = await tokenApp(fx.ctx, tenant, [], ['token:create', 'token:read']);
    const res = await fx.ctx.http
      .post('/proxy')
      .set('BT-API-KEY', noUse.key)
      .set('BT-PROXY-URL', fx.url(echo))
      .send({ a: 1 });
    expectProxyError(res, 403);
    const otherContainer = await tokenApp(
      fx.ctx,
      tenant,
      [rule('/general/', 'reveal', ['token:use'])],
      ['token:use'],
    );
    const denied = await fx.ctx.http
      .post('/proxy')
      .set('BT-API-KEY', otherContainer.key)
      .set('BT-PROXY-URL', fx.url(echo))
      .send({ n: `{{ ${card.id} }}` });
    expectProxyError(denied, 403);
    // Each refusal is audited once, as denied, with its caller; nothing was forwarded, so no success record.
    const refusals = await eventually(async () => {
      const rows = (await auditRows(fx.ctx, tenant.tenantId)).filter(
        (r) => r.outcome === 'denied' && [noUse.id, otherContainer.id].includes(r.actor_id ?? ''),
      );
      return rows.length >= 2 ? rows : null;
    });
    expect(refusals.map((r) => [r.actor_id, r.entity_type, r.operation])).toEqual([
      [noUse.id, 'proxy', 'post /proxy'],
      [otherContainer.id, 'proxy', 'proxy'],
    ]);
    const forwarded = (await auditRows(fx.ctx, tenant.tenantId)).filter(
      (r) => r.outcome === 'success' && [noUse.id, otherContainer.id].includes(r.actor_id ?? ''),
    );
    expect(forwarded).toEqual([]);
  });

  it('records each forwarded request and the tokens it used before answering, for JSON and text bodies', async () => {
    const user = await tokenApp(fx.ctx, tenant, [], ['token:use']);
    const send = (body: string, type: string) =>
      fx.ctx.http
        .post('/proxy')
        .set('BT-API-KEY', user.key)
        .set('BT-PROXY-URL', fx.url(echo))
        .set('Content-Type', type)
        .send(body);
    expect(
      (await send(JSON.stringify({ n: `{{ ${card.id} | json: '$.number' }}` }), 'application/json')).status,
    ).toBe(200);
    expect((await send(`card {{ ${card.id} | json: '$.number' }}`, 'text/plain')).status).toBe(200);
    expect((await send(JSON.stringify({ plain: true }), 'application/json')).status).toBe(200);
    const rows = (await auditRows(fx.ctx, tenant.tenantId)).filter((r) => r.actor_id === user.id);
    const used = rows.filter((r) => r.operation === 'detokenize');
    expect(used.map((r) => r.message)).toEqual([
      `Tokens used: ${card.id} (reveal)`,
      `Tokens used: ${card.id} (reveal)`,
    ]);
    expect(rows.filter((r) => r.operation === 'proxy' && r.outcome === 'success')).toHaveLength(3);
  });

  it('relays small, large and chunked answers byte for byte, and cuts the answer when the destination stops short', async () => {
    const big = Buffer.alloc(200 * 1024, 'b');
    const server = await fx.server((req, res) => {
      const binary = { 'content-type': 'application/octet-stream' };
      if (req.url === '/small') {
        res.writeHead(200, { ...binary, 'content-length': '5' });
        res.end('small');
      } else if (req.url === '/empty') {
        res.writeHead(200, { ...binary, 'content-length': '0' });
        res.end();
      } else if (req.url === '/big') {
        res.writeHead(200, { ...binary, 'content-length': String(big.length) });
        res.end(big);
      } else if (req.url === '/chunked') {
        res.writeHead(200, binary);
        res.write('chun');
        res.end('ked');
      } else {
        res.writeHead(200, { ...binary, 'content-length': '100' });
        res.write('only ten.!', () => res.socket?.destroy());
      }
    });
    // superagent hands its parser the response stream (typed as its Response).
    const bytes = (res: unknown, done: (err: Error | null, body: Buffer) => void): void => {
      const stream = res as NodeJS.ReadableStream;
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => done(null, Buffer.concat(chunks)));
      stream.on('error', (err: Error) => done(err, Buffer.alloc(0)));
    };
    const get = (path: string) =>
      fx.ctx.http
        .get(`/proxy${path}`)
        .set('BT-API-KEY', caller.key)
        .set('BT-PROXY-URL', fx.url(server))
        .buffer(true)
        .parse(bytes);
    for (const [path, expected] of [
      ['/small', Buffer.from('small')],
      ['/empty', Buffer.alloc(0)],
      ['/big', big],
      ['/chunked', Buffer.from('chunked')],
    ] as const) {
      const res = await get(path);
      expect([path, res.status, res.headers['bt-proxy-destination-status']]).toEqual([path, 200, '200']);
      expect(Buffer.compare(res.body as Buffer, expected)).toBe(0);
    }
    // Declared 100 bytes, sent 10: the caller must not get a complete-looking answer.
    const cut = await get('/cut').then(
      (res) => ({ complete: true, length: (res.body as Buffer).length }),
      () => ({ complete: false, length: 0 }),
    );
    expect(cut).toEqual({ complete: false, length: 0 });
  });

  it('cannot detokenize another tenant’s token', async () => {
    const other = await fx.ctx.newTenant('Other');
    const stranger = await tokenApp(fx.ctx, other, [], ['token:use']);
    const res = await fx.ctx.http
      .post('/proxy')
      .set('BT-API-KEY', stranger.key)
      .set('BT-PROXY-URL', fx.url(echo))
      .send({ n: `{{ ${card.id} }}` });
    expectProxyError(res, 400);
    expect(JSON.stringify(res.body)).not.toContain(card.number);
  });

  it('authenticates BT-PROXY-URL calls: 401 proxy_error without or with a bad key', async () => {
    const none = await fx.ctx.http.post('/proxy').set('BT-PROXY-URL', fx.url(echo)).send({});
    expectProxyError(none, 401);
    const bad = await fx.ctx.http
      .post('/proxy')
      .set('BT-PROXY-URL', fx.url(echo))
      .set('BT-API-KEY', 'key_nope')
      .send({});
    expectProxyError(bad, 401);
  });

  it('answers 400 proxy_error without a routing header, or with both', async () => {
    const none = await fx.ctx.http.post('/proxy').set('BT-API-KEY', caller.key).send({});
    expect(expectProxyError(none, 400).detail).toMatch(/BT-PROXY-KEY|BT-PROXY-URL/);
    const both = await proxy('post').set('BT-PROXY-KEY', 'abc').send({});
    expectProxyError(both, 400);
  });

  it('never logs the card number, the proxy key, the caller’s Authorization or cookies', async () => {
    await proxy('post')
      .set('Authorization', 'Bearer partner-secret-log')
      .send({ number: `{{ ${card.id} | json: '$.number' }}` });
    await fx.ctx.http.get('/proxy?bt-proxy-key=query-secret-key').set('BT-API-KEY', caller.key);
    // The log keeps an allow-list of the request: headers it does not name never reach a line.
    await fx.ctx.http
      .get('/proxy')
      .set('BT-PROXY-KEY', 'header-secret-key')
      .set('Cookie', 'session=cookie-secret-log');
    const logs = fx.ctx.logs.join('\n');
    expect(logs).toContain('"path":"/proxy"');
    expect(logs).not.toContain(card.number);
    expect(logs).not.toContain('query-secret-key');
    expect(logs).not.toContain('partner-secret-log');
    expect(logs).not.toContain('header-secret-key');
    expect(logs).not.toContain('cookie-secret-log');
  });

  it('answers 405 for a method the proxy does not serve', async () => {
    const res: Response = await fx.ctx.http.options('/proxy');
    expect([res.status, res.headers.allow]).toEqual([405, 'DELETE, GET, HEAD, PATCH, POST, PUT']);
  });

  it('counts upstream calls in /metrics by outcome, with no URL or key in a label', async () => {
    // What /metrics serves to the operator (test/health/metrics.e2e-spec.ts tests who may read it).
    const text = await fx.ctx.get(MetricsService).text();
    expect(text).toMatch(/token_vault_proxy_upstream_duration_seconds_count\{outcome="response"\} [1-9]/);
    expect(text).not.toContain(TEST_HOST);
    expect(text).not.toContain(caller.key);
  });

  it('uses the test host name as SNI, never an address', () => {
    expect(new Set(echo.servernames)).toEqual(new Set([TEST_HOST]));
  });
});
