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
    key = (await tokenApp(ctx, tenant, [], ['token:create', 'token:read', 'token:search'])).key;
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

  it('answers 400 for list query parameters that are objects', async () => {
    expectProblem(await ctx.http.get('/tokens?page[toString]=x').set('BT-API-KEY', key), 400);
    expectProblem(await ctx.http.get('/applications?size[a]=1').set('BT-API-KEY', tenant.key), 400);
  });
});
