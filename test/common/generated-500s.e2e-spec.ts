import { MAX_NESTING } from '../../src/common/limits';
import { TestContext, TestTenant } from '../support/test-app';
import { expectProblem } from '../support/problems';
import { tokenApp } from '../support/token-factory';

/** Cases the generated hostile-input run found answering 500 (or a wrong 200). */
describe('500s found by generated hostile requests', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let key: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    key = (await tokenApp(ctx, tenant, [], ['token:create', 'token:read', 'token:search', 'token:use'])).key;
  });
  afterAll(() => ctx.close());

  const post = (path: string, body: string, apiKey = key) =>
    ctx.http.post(path).set('BT-API-KEY', apiKey).set('Content-Type', 'application/json').send(body);

  it.each([
    ['metadata key', '{"type":"token","data":"x","metadata":{"\\ud800":"v"}}'],
    ['metadata value', '{"type":"token","data":"x","metadata":{"k":"\\ud800"}}'],
    ['mask', '{"type":"token","data":"x","mask":"\\ud800"}'],
    ['search_indexes', '{"type":"token","data":"x","search_indexes":["\\ud800"]}'],
  ])('answers 400 for a lone surrogate in %s, in /tokens and inside /tokenize', async (_label, body) => {
    expectProblem(await post('/tokens', body), 400);
    expectProblem(await post('/tokenize', `{"a": ${body}}`), 400);
  });

  it('answers 400 for a lone surrogate in a rule description and in a search query', async () => {
    const app =
      '{"name":"a","type":"private","permissions":["token:read"],"rules":[{"description":"\\ud800","priority":1,"container":"/","transform":"mask","permissions":["token:read"]}]}';
    expectProblem(await post('/applications', app, tenant.key), 400);
    expectProblem(await post('/tokens/search', '{"query":"metadata.k:\\ud800"}'), 400);
  });

  it.each([
    ['page null', '{"query":"id:x","page":null}'],
    ['size null', '{"query":"id:x","size":null}'],
    ['page an object with toString', '{"query":"id:x","page":{"toString":"x"}}'],
    ['size an object with toString', '{"query":"id:x","size":{"toString":"x"}}'],
    ['page an array', '{"query":"id:x","page":[1]}'],
  ])('answers 400 for search with %s', async (_label, body) => {
    expectProblem(await post('/tokens/search', body), 400);
  });

  it.each([
    ['arrays', (n: number) => `${'['.repeat(n)}"{{ x }}"${']'.repeat(n)}`],
    ['objects', (n: number) => `${'{"a":'.repeat(n)}"{{ x }}"${'}'.repeat(n)}`],
    ['arrays of objects', (n: number) => `${'[{"a":'.repeat(n)}1${'}]'.repeat(n)}`],
  ])('answers 400 for /detokenize with %s nested a few hundred deep', async (_label, nest) => {
    for (const levels of [MAX_NESTING + 1, 300, 5_000]) {
      const res = await post('/detokenize', nest(levels));
      expectProblem(res, 400);
      expect(res.body.detail).toBe(`The request body is nested deeper than ${MAX_NESTING} levels.`);
    }
    // At the limit the document is detokenized as before.
    expect(
      (await post('/detokenize', `${'['.repeat(MAX_NESTING)}"x"${']'.repeat(MAX_NESTING)}`)).status,
    ).toBe(200);
  });

  it('answers 400 for an unknown token id without echoing a card number written as the id', async () => {
    const res = await post('/detokenize', '{"a":"{{ 4111111111111111 }}","b":"{{ no-such-id }}"}');
    expectProblem(res, 400);
    expect(res.text).not.toContain('4111111111111111');
    expect(res.body.errors.tokens).toEqual([
      'unknown token id ################',
      'unknown token id no-such-id',
    ]);
  });

  it.each([
    ['put', '/tenants/self', '{"name":"Acme","settings":null}', 'settings'],
    ['post', '/reactors', '{"name":"r","configuration":{},"formula":null}', 'formula'],
    ['post', '/reactors', '{"name":"r","code":null}', 'code'],
    [
      'post',
      '/proxies',
      '{"name":"p","destination_url":"https://a.example","require_auth":null}',
      'require_auth',
    ],
    ['post', '/applications', '{"name":"a","type":"private","create_key":null}', 'create_key'],
  ] as const)('answers 400 naming the member for %s %s with %s', async (method, path, body, member) => {
    const res = await ctx.http[method](path)
      .set('BT-API-KEY', tenant.key)
      .set('Content-Type', 'application/json')
      .send(body);
    expectProblem(res, 400, [member]);
  });

  it('answers 400 naming start for /v2/tokens/search with "start": null', async () => {
    expectProblem(await post('/v2/tokens/search', '{"start":null}'), 400, ['start']);
    expectProblem(await post('/v2/tokens/search', '{"query":"id:x","start":null}'), 400, ['start']);
    expect((await post('/v2/tokens/search', '{"query":"id:x"}')).status).toBe(200);
  });

  it('still reads null as "clear" where the member is documented nullable', async () => {
    const created = await ctx.http
      .post('/applications')
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'a', type: 'private', permissions: ['token:read'], rules: [] });
    expect(created.status).toBe(201);
    const rule = {
      description: null,
      priority: 1,
      container: '/',
      transform: 'mask',
      permissions: ['token:read'],
    };
    const res = await ctx.http
      .put(`/applications/${created.body.id as string}`)
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'a', permissions: ['token:read'], rules: [rule] });
    expect(res.status).toBe(200);
    const token = await post('/tokens', '{"type":"token","data":"x","metadata":null,"expires_at":null}');
    expect(token.status).toBe(201);
  });

  it('answers 400 for list query parameters that are objects', async () => {
    expectProblem(await ctx.http.get('/tokens?page[toString]=x').set('BT-API-KEY', key), 400);
    expectProblem(await ctx.http.get('/applications?size[a]=1').set('BT-API-KEY', tenant.key), 400);
  });
});
