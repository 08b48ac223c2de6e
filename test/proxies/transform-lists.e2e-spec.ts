import { expectProblem } from '../support/problems';
import { TestHttpsServer } from '../support/https-test-server';
import {
  callConfiguredProxy,
  createProxy,
  echoedHeaders,
  expectProxyError,
  ProxyFixture,
  proxyFixture,
} from '../support/proxy-fixture';
import { TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

const TAG = (tag: string) =>
  `module.exports = async (req) => ({ body: { ...req.args.body, steps: [...(req.args.body.steps || []), '${tag}'] }, headers: req.args.headers });`;
const ACCOUNT = { username: 'bsmith1486', accountNumber: '56834512', note: 'account 56834512 on file' };

/** `request_transforms` / `response_transforms`: each type through a real local HTTPS destination. */
describe('/proxies: listed transforms (code, mask, append_json, append_text, append_header)', () => {
  let fx: ProxyFixture;
  let echo: TestHttpsServer;
  let text: TestHttpsServer;
  let tenant: TestTenant;
  let caller: Awaited<ReturnType<typeof tokenApp>>;

  beforeAll(async () => {
    fx = await proxyFixture();
    echo = await fx.server();
    text = await fx.server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('plain answer');
    });
    tenant = await fx.ctx.newTenant();
    caller = await tokenApp(fx.ctx, tenant, [], ['token:use']);
  });
  afterAll(() => fx.close());

  const call = (key: string, body: unknown) => callConfiguredProxy(fx.ctx, caller.key, key, body);
  const create = (body: Record<string, unknown>) =>
    fx.ctx.http
      .post('/proxies')
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'Listed', destination_url: fx.url(echo), ...body });

  it('runs code transforms in order on each side, and answers the lists back', async () => {
    const res = await create({
      request_transforms: [{ code: TAG('req-1') }, { type: 'code', code: TAG('req-2') }],
      response_transforms: [{ type: 'code', code: TAG('res-1') }, { code: TAG('res-2') }],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      request_transform: null,
      response_transform: null,
      request_transforms: [
        { type: 'code', code: TAG('req-1') },
        { type: 'code', code: TAG('req-2') },
      ],
      response_transforms: [
        { type: 'code', code: TAG('res-1') },
        { type: 'code', code: TAG('res-2') },
      ],
    });
    const answer = await call(res.body.key as string, { a: 1 });
    expect([answer.status, answer.body]).toEqual([
      200,
      { a: 1, steps: ['req-1', 'req-2', 'res-1', 'res-2'] },
    ]);
    const got = await fx.ctx.http.get(`/proxies/${res.body.id as string}`).set('BT-API-KEY', tenant.key);
    expect(got.body.request_transforms).toEqual(res.body.request_transforms);
  });

  it('mask replaces each captured value within the matched sections, one character per character', async () => {
    const { key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(echo),
      response_transforms: [
        { type: 'mask', matcher: 'regex', replacement: '*', expression: '"accountNumber":\\s*"(.*?)"' },
      ],
    });
    const answer = await call(key, ACCOUNT);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ ...ACCOUNT, accountNumber: '********' });
  });

  it('append_json, append_text and append_header add to the answer, after a mask', async () => {
    const { key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(echo),
      response_transforms: [
        { type: 'mask', matcher: 'regex', replacement: '#', expression: '(5683)4512' },
        { type: 'append_json', options: { value: 'vault', location: '$.meta.source' } },
        { type: 'append_header', options: { value: 'yes', location: 'X-Masked' } },
      ],
    });
    const answer = await call(key, ACCOUNT);
    expect(answer.status).toBe(200);
    expect(answer.headers['x-masked']).toBe('yes');
    expect(answer.body).toEqual({
      ...ACCOUNT,
      accountNumber: '####4512',
      note: 'account ####4512 on file',
      meta: { source: 'vault' },
    });
    expect(echoedHeaders(answer)['x-masked']).toBeUndefined();

    const { key: textKey } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(text),
      response_transforms: [{ type: 'append_text', options: { value: ' (checked)' } }],
    });
    const plain = await call(textKey, {});
    expect([plain.status, plain.text]).toEqual([200, 'plain answer (checked)']);
  });

  it('append_json on an answer that is not a JSON object is a proxy error, never the raw answer', async () => {
    const { key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(text),
      response_transforms: [{ type: 'append_json', options: { value: 'x', location: 'a' } }],
    });
    expectProxyError(await call(key, {}), 502);
  });

  it('a slow mask expression is stopped by the sandbox time limit', async () => {
    const { key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(echo),
      response_transforms: [{ type: 'mask', matcher: 'regex', replacement: '*', expression: '(a+)+$' }],
    });
    const started = Date.now();
    const answer = await call(key, { s: `${'a'.repeat(40)}!` });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(answer.body)).not.toContain('aaaa');
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it.each([
    [
      'a type the request side does not take',
      { request_transforms: [{ type: 'mask' }] },
      'request_transforms[0].type',
    ],
    ['an unknown type', { response_transforms: [{ type: 'detokenize' }] }, 'response_transforms[0].type'],
    ['code missing', { response_transforms: [{ type: 'code' }] }, 'response_transforms[0].code'],
    [
      'a mask without a capture group',
      { response_transforms: [{ type: 'mask', matcher: 'regex', replacement: '*', expression: 'abc' }] },
      'response_transforms[0].expression',
    ],
    [
      'a mask expression that does not compile',
      { response_transforms: [{ type: 'mask', matcher: 'regex', replacement: '*', expression: '(' }] },
      'response_transforms[0].expression',
    ],
    [
      'a mask replacement longer than one character',
      { response_transforms: [{ type: 'mask', matcher: 'regex', replacement: '**', expression: '(a)' }] },
      'response_transforms[0].replacement',
    ],
    [
      'a header value on two lines',
      { response_transforms: [{ type: 'append_header', options: { value: 'a\r\nb', location: 'x-a' } }] },
      'response_transforms[0].options.value',
    ],
    [
      'a header name that is not one',
      { response_transforms: [{ type: 'append_header', options: { value: 'a', location: 'x a' } }] },
      'response_transforms[0].options.location',
    ],
    [
      'a JSON location that is not a path of names',
      { response_transforms: [{ type: 'append_json', options: { value: 'a', location: '$[0]' } }] },
      'response_transforms[0].options.location',
    ],
    [
      'both the singular and the list of one side',
      { request_transform: { code: TAG('x') }, request_transforms: [{ code: TAG('y') }] },
      'request_transforms',
    ],
  ])('refuses %s with 400', async (_name, body, field) => {
    expectProblem(await create(body), 400, [field]);
  });

  it('refuses listed code that does not compile with 422, and more than 10 transforms with 400', async () => {
    expectProblem(await create({ response_transforms: [{ code: 'module.exports = (' }] }), 422, [
      'response_transforms[0].code',
    ]);
    const many = Array.from({ length: 11 }, () => ({ type: 'append_text', options: { value: 'x' } }));
    expectProblem(await create({ response_transforms: many }), 400, ['response_transforms']);
  });

  it('PATCH replaces a list as a whole, and null removes it', async () => {
    const res = await create({ response_transforms: [{ type: 'append_text', options: { value: '!' } }] });
    const patch = (value: unknown) =>
      fx.ctx.http
        .patch(`/proxies/${res.body.id as string}`)
        .set('BT-API-KEY', tenant.key)
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify(value));
    const replaced = await patch({
      response_transforms: [{ type: 'append_header', options: { value: '1', location: 'x-one' } }],
    });
    expect(replaced.body.response_transforms).toEqual([
      { type: 'append_header', options: { value: '1', location: 'x-one' } },
    ]);
    expect((await patch({ name: 'Renamed' })).body.response_transforms).toEqual(
      replaced.body.response_transforms,
    );
    expect((await patch({ response_transforms: null })).body.response_transforms).toBeNull();
  });
});
