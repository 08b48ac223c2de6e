import { buildOpenApiDocument, READING_ORDER } from '../../src/openapi';
import { REQUEST_EXAMPLES } from '../../src/openapi-examples';
import { CARD_INSIGHTS } from '../../src/reactor-formulas/official/card-insights';
import { formulaBody } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';
import { ALL_TOKEN_PERMISSIONS } from '../support/token-factory';

interface DocOperation {
  summary?: string;
  description?: string;
  requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
  responses: Record<string, { content?: Record<string, unknown> }>;
}

/** Every example of /docs, sent as "Try it out" would send it, must answer the documented success status. */
describe('the OpenAPI document for /docs', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let tokenKey: string;
  let paths: Record<string, Record<string, DocOperation>>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    tokenKey = (
      await ctx.newApplication(tenant, 'private', [...ALL_TOKEN_PERMISSIONS, 'token:use', 'token:search'])
    ).key;
    paths = buildOpenApiDocument(ctx.vault.app).paths as unknown as Record<
      string,
      Record<string, DocOperation>
    >;
    const m = (method: 'post', path: string, body: object, key = tenant.key) =>
      ctx.http[method](path).set('BT-API-KEY', key).send(body);
    ids['/applications/{id}'] = (
      await m('post', '/applications', { name: 'docs', type: 'private', permissions: ['token:read'] })
    ).body.id;
    ids['/tokens/{id}'] = (await m('post', '/tokens', { type: 'token', data: 'docs' }, tokenKey)).body.id;
    ids['/reactor-formulas/{id}'] = (await m('post', '/reactor-formulas', formulaBody())).body.id;
    ids['/proxies/{id}'] = (
      await m('post', '/proxies', { name: 'docs', destination_url: 'https://api.example.com' })
    ).body.id;
    ids['/reactors/{id}'] = (
      await m('post', '/reactors', { name: 'docs', configuration: {}, formula: { id: CARD_INSIGHTS.id } })
    ).body.id;
  });
  afterAll(() => ctx.close());

  it('lists the paths in reading order, applications first, whatever order the routes are matched in', () => {
    const segments = [...new Set(Object.keys(paths).map((path) => path.split('/')[1]))];
    expect(segments).toEqual(READING_ORDER);
    expect(segments[0]).toBe('applications');
  });

  it('gives every operation a summary, a description and problem-details error answers', () => {
    for (const [path, methods] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(methods)) {
        expect({
          op: `${method} ${path}`,
          summary: typeof op.summary,
          description: typeof op.description,
        }).toEqual({
          op: `${method} ${path}`,
          summary: 'string',
          description: 'string',
        });
        // /proxy's own errors are `{ proxy_error: <problem details> }` (spec §4.5 rule 5).
        const errorType =
          path.startsWith('/proxy/') || path === '/proxy' ? 'application/json' : 'application/problem+json';
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) >= 400 && Number(status) !== 503) {
            expect(Object.keys(response.content ?? {})).toEqual([errorType]);
          }
        }
      }
    }
    expect(Object.keys(paths['/tokens/{id}'].patch.requestBody?.content ?? {})).toEqual([
      'application/merge-patch+json',
    ]);
  });

  it('answers every documented example with the documented success status', async () => {
    const sent: string[] = [];
    for (const [path, methods] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(methods)) {
        for (const [mediaType, media] of Object.entries(op.requestBody?.content ?? {})) {
          for (const [name, example] of Object.entries(media.examples ?? {})) {
            const success = Object.keys(op.responses).find((s) => s.startsWith('2'));
            const url = path.replace(/\{id\}/, ids[path.replace(/\/react(-async)?$/, '')] ?? 'missing');
            const key =
              path.startsWith('/tokens') || path === '/tokenize' || /\/react(-async)?$/.test(path)
                ? tokenKey
                : tenant.key;
            const res = await ctx.http[method as 'post'](url)
              .set('BT-API-KEY', key)
              .set('Content-Type', mediaType)
              .send(JSON.stringify(example.value));
            expect({
              example: `${method.toUpperCase()} ${path} (${name})`,
              status: res.status,
              body: res.status >= 400 ? res.body : undefined,
            }).toEqual({
              example: `${method.toUpperCase()} ${path} (${name})`,
              status: Number(success),
              body: undefined,
            });
            sent.push(`${method} ${path} ${name}`);
          }
        }
      }
    }
    // Every example of the table reached the document (and was sent), and so did POST /tokenize's own;
    // react-async shares the body (and its example) of react.
    const table = Object.values(REQUEST_EXAMPLES).flatMap((byMethod) =>
      Object.values(byMethod).flatMap((examples) => Object.keys(examples)),
    );
    expect(sent).toHaveLength(table.length + 2);
  });
});
