import type { Response } from 'supertest';
import { MAX_DETOKENIZED_CHARS, MAX_NESTING } from '../../src/common/limits';
import { TestHttpsServer } from '../support/https-test-server';
import { createProxy, expectProxyError, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { expectProblem } from '../support/problems';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import { TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

/**
 * Detokenization multiplies: a small body can reference one large token many times. The expanded output is
 * counted while it is built and refused past MAX_DETOKENIZED_CHARS (413), on /proxy (JSON, form and text
 * bodies) and in reactor args, and /proxy bodies are held to the nesting limit of the other routes; the
 * server keeps answering /health meanwhile.
 */
describe('detokenization output and nesting limits', () => {
  let fx: ProxyFixture;
  let echo: TestHttpsServer;
  let tenant: TestTenant;
  let caller: Awaited<ReturnType<typeof tokenApp>>;
  /** A 200 KB string token: 60 references expand to 12 MB, past the 10 MB limit. */
  let big: string;
  const TOKEN_CHARS = 200_000;
  const REFERENCES = 60;

  beforeAll(async () => {
    fx = await proxyFixture();
    echo = await fx.server();
    tenant = await fx.ctx.newTenant();
    caller = await tokenApp(fx.ctx, tenant, [], ['token:create', 'token:use']);
    const created = await caller.api.create({ type: 'token', data: 'x'.repeat(TOKEN_CHARS) });
    expect(created.status).toBe(201);
    big = created.body.id as string;
    expect(TOKEN_CHARS * REFERENCES).toBeGreaterThan(MAX_DETOKENIZED_CHARS);
  });
  afterAll(() => fx.close());

  const proxy = () =>
    fx.ctx.http.post('/proxy').set('BT-API-KEY', caller.key).set('BT-PROXY-URL', fx.url(echo));

  /** Runs `hostile` while polling /health; returns its answer and the slowest /health answer (ms). */
  async function whileHealthPolled(hostile: () => PromiseLike<Response>): Promise<[Response, number]> {
    let done = false;
    let slowest = 0;
    const poll = (async () => {
      while (!done) {
        const started = Date.now();
        await fx.ctx.http.get('/health').expect(200);
        slowest = Math.max(slowest, Date.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    try {
      return [await hostile(), slowest];
    } finally {
      done = true;
      await poll;
    }
  }

  it('refuses a JSON body whose references expand past the limit with 413 proxy_error, /health answering', async () => {
    const before = echo.requests;
    const body = { refs: Array.from({ length: REFERENCES }, () => `{{ ${big} }}`) };
    const [res, slowest] = await whileHealthPolled(() => proxy().send(body));
    const problem = expectProxyError(res, 413);
    expect(problem.detail).toContain(MAX_DETOKENIZED_CHARS.toLocaleString('en-US'));
    expect(res.text).not.toContain('xxxxxxxx');
    expect(echo.requests).toBe(before);
    expect(slowest).toBeLessThan(1000);
  });

  it('refuses the same expansion through filters, in one string, in a form and in a text body', async () => {
    const before = echo.requests;
    const inOneString = Array.from({ length: REFERENCES }, (_, i) => `${i}:{{ ${big} | upcase }}`).join(',');
    expectProxyError(await proxy().send({ s: inOneString }), 413);
    const form = new URLSearchParams(
      Array.from({ length: REFERENCES }, (_, i): [string, string] => [`f${i}`, `{{ ${big} }}`]),
    );
    expectProxyError(await proxy().type('form').send(form.toString()), 413);
    const text = Array.from({ length: REFERENCES }, () => `{{ ${big} }}`).join('\n');
    expectProxyError(await proxy().type('text/plain').send(text), 413);
    expect(echo.requests).toBe(before);
  });

  it('still expands a large token a few times', async () => {
    const res = await proxy().send({ a: `{{ ${big} }}`, b: `{{ ${big} | size }}` });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ a: 'x'.repeat(TOKEN_CHARS), b: TOKEN_CHARS });
  });

  it('refuses a /proxy JSON body nested deeper than the limit with 400 proxy_error, detokenized or transformed', async () => {
    const deep = (levels: number): string =>
      '['.repeat(levels) + `"{{ ${big} | size }}"` + ']'.repeat(levels);
    const before = echo.requests;
    const res = await proxy().type('json').send(deep(200_000));
    expect(expectProxyError(res, 400).detail).toContain(`${MAX_NESTING} levels`);
    const { key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(echo),
      request_transform: { code: 'module.exports = async function (req) { return req.args; };' },
    });
    const transformed = await fx.ctx.http
      .post('/proxy')
      .set('BT-API-KEY', caller.key)
      .set('BT-PROXY-KEY', key)
      .type('json')
      .send('['.repeat(200_000) + ']'.repeat(200_000));
    expectProxyError(transformed, 400);
    expect(echo.requests).toBe(before);
    const shallow = await proxy()
      .type('json')
      .send(deep(MAX_NESTING - 1));
    expect(shallow.status).toBe(200);
  });

  it('refuses reactor args that expand past the limit with 413 in the common format', async () => {
    const { reactorId } = await newReactor(fx.ctx, tenant, {
      code: 'module.exports = async function (req) { return { raw: req.args.refs.length }; };',
      request_parameters: [{ name: 'refs', type: 'string' }],
    });
    const api = reactorsApi(fx.ctx, tenant);
    const refs = Array.from({ length: REFERENCES }, () => `{{ ${big} }}`).join('');
    const [res, slowest] = await whileHealthPolled(() =>
      api.react(reactorId, { args: { refs } }, caller.key),
    );
    expectProblem(res, 413);
    expect(res.text).not.toContain('xxxxxxxx');
    expect(slowest).toBeLessThan(1000);
    const ok = await api.react(reactorId, { args: { refs: `{{ ${big} }}` } }, caller.key);
    expect([ok.status, ok.body.raw]).toEqual([200, TOKEN_CHARS]);
  });
});
