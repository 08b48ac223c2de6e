import type { OpenAPIObject } from '@nestjs/swagger';
import { completeDocument } from './openapi-docs';

const PROBLEM = { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' } } };
const BODY = { content: { 'application/json': { schema: { $ref: '#/components/schemas/WidgetDto' } } } };

function documentOf(paths: Record<string, Record<string, object>>): OpenAPIObject {
  return { openapi: '3.0.0', info: { title: 't', version: '1' }, paths };
}

describe('completeDocument', () => {
  it('adds the problem-details answers an operation can give, keeping declared text', () => {
    const doc = completeDocument(
      documentOf({
        '/widgets/{id}': {
          put: {
            summary: 'Replace a widget',
            security: [{ key: [] }],
            requestBody: BODY,
            responses: {
              '200': { description: 'ok' },
              '403': { description: 'Requires widget:update.' },
              '409': { description: '' },
              '422': { description: 'Bad code.' },
            },
          },
        },
      }),
      {},
    );
    const op = doc.paths['/widgets/{id}'].put as unknown as {
      description: string;
      responses: Record<string, unknown>;
    };
    expect(op.description).toBe('Replace a widget');
    expect(Object.keys(op.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '415',
      '422',
      '429',
    ]);
    expect(op.responses['403']).toMatchObject({ description: 'Requires widget:update.', content: PROBLEM });
    expect(op.responses['409']).toMatchObject({
      description:
        'Conflict (a duplicate id, a resource in use, or a request with the same BT-IDEMPOTENCY-KEY still running).',
      content: PROBLEM,
    });
    expect(op.responses['422']).toMatchObject({ description: 'Bad code.', content: PROBLEM });
    expect((op as { parameters?: { name: string }[] }).parameters?.map((p) => p.name)).toContain(
      'BT-IDEMPOTENCY-KEY',
    );
    expect(op.responses['429']).toMatchObject({
      content: PROBLEM,
      headers: {
        'Retry-After': expect.any(Object),
        RateLimit: expect.any(Object),
        'RateLimit-Policy': expect.any(Object),
      },
    });
    expect(op.responses['200']).toMatchObject({ headers: { RateLimit: expect.any(Object) } });
  });

  it('leaves the error answers of an operation that declares its own bodies', () => {
    const own = { description: '`proxy_error`', content: { 'application/json': {} } };
    const doc = completeDocument(
      documentOf({ '/proxy': { get: { summary: 's', security: [{ key: [] }], responses: { '400': own } } } }),
      {},
    );
    expect((doc.paths['/proxy'].get as unknown as { responses: unknown }).responses).toEqual({ '400': own });
  });

  it('puts the examples of a DTO on the bodies the method sends, and refuses examples no body uses', () => {
    const examples = { WidgetDto: { post: { one: { summary: 'One', value: { name: 'w' } } } } };
    const post = { summary: 's', requestBody: structuredClone(BODY), responses: {} };
    const put = { summary: 's', requestBody: structuredClone(BODY), responses: {} };
    completeDocument(documentOf({ '/widgets': { post, put } }), examples);
    expect(post.requestBody.content['application/json']).toHaveProperty('examples', examples.WidgetDto.post);
    expect(put.requestBody.content['application/json']).not.toHaveProperty('examples');

    expect(() => completeDocument(documentOf({ '/widgets': { put } }), examples)).toThrow('post WidgetDto');
  });

  it('refuses a declared error answer without text', () => {
    const doc = documentOf({ '/x': { get: { summary: 's', responses: { '418': { description: '' } } } } });
    expect(() => completeDocument(doc, {})).toThrow('GET /x: the 418 answer needs a description');
  });
  it('shows each error status with an example of its own status, not one 400 for all', () => {
    const doc = completeDocument(
      documentOf({
        '/widgets/{id}': {
          put: {
            summary: 'Replace a widget',
            security: [{ key: [] }],
            requestBody: BODY,
            responses: { '200': { description: 'ok' }, '409': { description: 'Taken.' } },
          },
        },
      }),
      {},
    );
    const responses = (
      doc.paths['/widgets/{id}'].put as unknown as {
        responses: Record<
          string,
          { content?: Record<string, { example?: { status: number; detail: string } }> }
        >;
      }
    ).responses;
    const examples = Object.entries(responses)
      .filter(([status]) => Number(status) >= 400)
      .map(([status, r]) => [Number(status), r.content?.['application/problem+json']?.example] as const);
    expect(examples.map(([status]) => status).sort()).toEqual([400, 401, 403, 404, 409, 413, 415, 422, 429]);
    for (const [status, example] of examples) {
      expect(example?.status).toBe(status);
    }
    expect(new Set(examples.map(([, e]) => e?.detail)).size).toBe(examples.length);
  });

  it('gives BT-IDEMPOTENCY-KEY no value that "Try it out" would send with every write', () => {
    const doc = completeDocument(
      documentOf({
        '/widgets': {
          post: { summary: 'Create', security: [{ key: [] }], responses: { '201': { description: 'ok' } } },
        },
      }),
      {},
    );
    const op = doc.paths['/widgets'].post as unknown as { parameters: Record<string, unknown>[] };
    const key = op.parameters.find((p) => p.name === 'BT-IDEMPOTENCY-KEY');
    expect(key).toBeDefined();
    const text = JSON.stringify(key);
    expect(text).not.toMatch(/"(example|examples|default)"/);
  });
});
