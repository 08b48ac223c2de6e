import express from 'express';
import request from 'supertest';
import type { Response } from 'supertest';
import { TestContext, TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

/** What Express's own res.json sends for `body`: the reference the vault's JSON answers must match. */
async function expressJson(body: unknown, status: number): Promise<Response> {
  const reference = express();
  reference.set('etag', false);
  reference.get('/', (_req, res) => {
    res.status(status).json(body);
  });
  return request(reference).get('/');
}

describe('JSON answers (src/common/json-replies.ts)', () => {
  let ctx: TestContext;
  let tenant: TestTenant;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  it('sends the bytes, Content-Type and Content-Length Express would, multi-byte text included', async () => {
    const writer = await tokenApp(ctx, tenant, [], ['token:create', 'token:read']);
    const created = await writer.api.create({
      type: 'token',
      data: 'Zoë 💳 "quoted" \\ \u2028',
      metadata: { k: 'é' },
    });
    expect(created.status).toBe(201);
    const read = await writer.api.get(created.body.id as string);
    expect(read.status).toBe(200);
    for (const [answer, status] of [
      [created, 201],
      [read, 200],
    ] as const) {
      const reference = await expressJson(answer.body, status);
      expect(answer.text).toBe(reference.text);
      expect(answer.headers['content-type']).toBe(reference.headers['content-type']);
      expect(answer.headers['content-length']).toBe(reference.headers['content-length']);
      expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.text));
      expect(answer.headers['content-length']).not.toBe(String(answer.text.length));
    }
  });

  it('answers HEAD with the headers and no body, and 204 with neither body nor type', async () => {
    const head = await ctx.http.head('/applications/key').set('BT-API-KEY', tenant.key);
    const get = await ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key);
    expect([head.status, get.status]).toEqual([200, 200]);
    expect(head.text ?? '').toBe('');
    expect(head.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);

    const writer = await tokenApp(ctx, tenant, [], ['token:create', 'token:delete']);
    const created = await writer.api.create({ type: 'token', data: 'gone' });
    const deleted = await writer.api.delete(created.body.id as string);
    expect(deleted.status).toBe(204);
    expect(deleted.text ?? '').toBe('');
    expect(deleted.headers['content-type']).toBeUndefined();
  });

  it('leaves errors to the problem format', async () => {
    const res = await ctx.http.get('/applications/key');
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  });
});
