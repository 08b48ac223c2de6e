import { MAX_NESTING } from '../../src/common/limits';
import { TestContext, TestTenant } from '../support/test-app';
import { expectProblem } from '../support/problems';
import { rule, tokenApp } from '../support/token-factory';

const SURROGATE =
  'The request body contains an unpaired UTF-16 surrogate (such as \\ud800): text must be valid Unicode.';
const DEEP = `The request body is nested deeper than ${MAX_NESTING} levels.`;

/** The checks of the one pass over a body (request-body.ts, HandValidated DTOs), through HTTP. */
describe('one pass over a request body', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let key: string;
  let tokenId: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    const permissions = ['token:create', 'token:read', 'token:update'] as const;
    key = (await tokenApp(ctx, tenant, [rule('/', 'reveal', [...permissions])], [...permissions])).key;
    const made = await post('/tokens', '{"type":"token","data":{"a":1}}');
    expect(made.status).toBe(201);
    tokenId = made.body.id as string;
  });
  afterAll(() => ctx.close());

  function post(path: string, body: string | Buffer, contentType = 'application/json') {
    // Bytes as given: superagent would serialize a Buffer sent as JSON
    return ctx.http
      .post(path)
      .set('BT-API-KEY', key)
      .set('Content-Type', contentType)
      .serialize((bytes: unknown) => bytes as string)
      .send(body);
  }
  const patch = (body: string) =>
    ctx.http
      .patch(`/tokens/${tokenId}`)
      .set('BT-API-KEY', key)
      .set('Content-Type', 'application/merge-patch+json')
      .send(body);

  it.each([
    ['data', '{"type":"token","data":"\\ud800"}'],
    ['a member name', '{"\\uDC00":1,"type":"token","data":"x"}'],
    ['an array deep in data', `{"type":"token","data":${'['.repeat(40)}"\\uDBFF"${']'.repeat(40)}}`],
    ['metadata', '{"type":"token","data":"x","metadata":{"k":"a\\ud9A0"}}'],
    ['privacy', '{"type":"token","data":"x","privacy":{"classification":"\\udfff"}}'],
  ])('refuses a lone surrogate in %s, on create, tokenize and patch alike', async (_label, body) => {
    for (const res of [
      await post('/tokens', body),
      await post('/tokenize', `[${body}]`),
      await patch(body),
    ]) {
      expectProblem(res, 400);
      expect(res.body.detail).toBe(SURROGATE);
    }
  });

  it('refuses a lone surrogate sent raw in a UTF-16 body', async () => {
    const raw = Buffer.concat([
      Buffer.from('{"type":"token","data":"', 'utf16le'),
      Buffer.from([0x00, 0xd8]),
      Buffer.from('"}', 'utf16le'),
    ]);
    const res = await post('/tokens', raw, 'application/json; charset=utf-16le');
    expectProblem(res, 400);
    expect(res.body.detail).toBe(SURROGATE);
    expect(await ctx.dataSource.query('SELECT count(*)::int AS n FROM tokens')).toEqual([{ n: 1 }]);
  });

  it('stores surrogate pairs and escaped backslashes as sent', async () => {
    const res = await post('/tokens', '{"type":"token","data":{"s":"\\ud83d\\ude00 \\\\ud800"}}');
    expect(res.status).toBe(201);
    const read = await ctx.http.get(`/tokens/${res.body.id}`).set('BT-API-KEY', key);
    expect(read.body.data).toEqual({ s: '😀 \\ud800' });
  });

  it('refuses a body nested past the limit, counted over objects and arrays', async () => {
    const deep = `{"type":"token","data":${'[{"a":'.repeat(MAX_NESTING / 2)}1${'}]'.repeat(MAX_NESTING / 2)}}`;
    expect((await post('/tokens', deep)).body.detail).toBe(DEEP);
    const atLimit = `{"type":"token","data":${'[{"a":'.repeat(MAX_NESTING / 2 - 1)}"{[{["${'}]'.repeat(MAX_NESTING / 2 - 1)}}`;
    expect((await post('/tokens', atLimit)).status).toBe(201);
  });

  it('refuses unknown members with the message the validation pipe gives, and nothing else', async () => {
    const res = await post(
      '/tokens',
      '{"type":"card","data":{"number":"1"},"color":"blue","4111111111111111":1}',
    );
    expectProblem(res, 400);
    expect(res.body.errors).toEqual({ color: ['is not allowed'], '################': ['is not allowed'] });
    expect((await patch('{"type":"card","colour":1}')).body.errors).toEqual({
      type: ['is not allowed'],
      colour: ['is not allowed'],
    });
    // Inside /tokenize, definitions are read by hand (token-fields.ts), with their own message.
    expect((await post('/tokenize', '{"a":{"type":"token","data":"x","color":1}}')).body.errors).toEqual({
      'a.color': ['is not a token field'],
    });
  });

  it('keeps data members named __proto__ and constructor, and answers bodies that are not objects as before', async () => {
    const res = await post('/tokens', '{"type":"token","data":{"__proto__":{"a":1},"constructor":"c"}}');
    expect(res.status).toBe(201);
    const read = await ctx.http.get(`/tokens/${res.body.id}`).set('BT-API-KEY', key);
    expect(JSON.stringify(read.body.data)).toBe('{"__proto__":{"a":1},"constructor":"c"}');
    expect((await post('/tokens', 'null')).body.errors).toEqual({
      type: ['must be one of token, card, bank'],
    });
    expect((await post('/tokens', '"text"')).body.errors).toEqual({ body: ['body is required'] });
    expect((await post('/tokens', '[{"type":"token","data":"x"}]')).body.errors).toEqual({
      0: ['is not allowed'],
    });
  });
});
