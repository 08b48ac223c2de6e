import { TestContext, TestTenant } from '../support/test-app';
import { expectProblem } from '../support/problems';
import { tokenApp } from '../support/token-factory';

const CARD = '4111111111111111';
const CARD_BODY = JSON.stringify({ type: 'card', data: { number: CARD } });

// One app for the file: each describe works in a tenant of its own.
let ctx: TestContext;
beforeAll(async () => {
  ctx = await TestContext.create();
});
afterAll(() => ctx.close());

describe('request bodies: JSON only, no echo, bounded errors (issue: first hour)', () => {
  let tenant: TestTenant;
  let key: string;

  beforeAll(async () => {
    tenant = await ctx.newTenant();
    key = (await tokenApp(ctx, tenant, [], ['token:create', 'token:read', 'token:search'])).key;
  });

  const send = (method: 'post' | 'put', path: string, body: string, contentType?: string) => {
    const req = ctx.http[method](path).set('BT-API-KEY', key);
    if (contentType !== undefined) {
      req.set('Content-Type', contentType);
    } else {
      req.unset('Content-Type');
    }
    return req.send(body);
  };

  it.each([
    ['form-urlencoded (curl’s default)', 'application/x-www-form-urlencoded'],
    ['text/plain', 'text/plain'],
    ['no content type', undefined],
    ['multipart', 'multipart/form-data; boundary=x'],
  ])('answers 415 naming JSON for a %s body, never echoing the card', async (_label, contentType) => {
    for (const path of ['/tokens', '/tokenize', '/tokens/search']) {
      const res = await send('post', path, CARD_BODY, contentType);
      expectProblem(res, 415);
      expect(res.body.detail).toMatch(/application\/json/);
      expect(res.text).not.toContain(CARD);
    }
    expect(
      await ctx.dataSource.query('SELECT count(*)::int AS n FROM tokens WHERE tenant_id = $1', [
        tenant.tenantId,
      ]),
    ).toEqual([{ n: 0 }]);
  });

  it('bounds and sanitizes an unknown member’s name', async () => {
    const res = await send(
      'post',
      '/applications',
      JSON.stringify({ name: 'x', type: 'private', [`${CARD}${'y'.repeat(200)}\u0000`]: 1 }),
      'application/json',
    ).set('BT-API-KEY', tenant.key);
    expectProblem(res, 400);
    for (const path of Object.keys(res.body.errors)) {
      expect(path.length).toBeLessThanOrEqual(65);
      expect(path).not.toMatch(/[^\x20-\x7e…]/);
    }
  });

  it('says "is required" once for a missing required field', async () => {
    const app = await ctx.http
      .post('/applications')
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'a', type: 'private' });
    const res = await ctx.http
      .put(`/applications/${app.body.id}`)
      .set('BT-API-KEY', tenant.key)
      .send({ rules: [] });
    expectProblem(res, 400, ['name']);
    expect(res.body.errors.name).toEqual(['name is required']);
  });

  it('says a malformed body is not valid JSON and where it breaks, without quoting it', async () => {
    const res = await send(
      'post',
      '/tokens',
      `{"type": "card", "data": {"number": ${CARD}x}}`,
      'application/json',
    );
    expectProblem(res, 400);
    expect(res.body.detail).toBe('The request body is not valid JSON: it breaks at line 1, column 53.');
    expect(res.text).not.toContain(CARD);
    const cut = await send('post', '/tokens', '{"type": "card"', 'application/json');
    expect(cut.body.detail).toBe('The request body is not valid JSON: it ends too early.');
  });

  it('states the limit in a 413', async () => {
    const res = await send(
      'post',
      '/tokens',
      JSON.stringify({ data: 'x'.repeat(1_100_000) }),
      'application/json',
    );
    expectProblem(res, 413);
    expect(res.body.detail).toMatch(/1 MB/);
  });

  it('caps the errors of a huge array body', async () => {
    const body = `[${Array.from({ length: 400_000 }, () => '1').join(',')}]`;
    for (const path of ['/tokens', '/tokens/search']) {
      const res = await send('post', path, body, 'application/json');
      expect(res.status).toBe(400);
      expect(res.text.length).toBeLessThan(16_384);
    }
    const apps = await send('post', '/applications', body, 'application/json').set('BT-API-KEY', tenant.key);
    expect(apps.status).toBe(400);
    expect(apps.text.length).toBeLessThan(16_384);
  });
});

describe('known paths with another method, and request logs', () => {
  let tenant: TestTenant;
  beforeAll(async () => {
    tenant = await ctx.newTenant('Other');
  });

  it('answers 405 with Allow for a known path and a method it does not serve', async () => {
    const res = await ctx.http.put('/tokens').set('BT-API-KEY', tenant.key).send({});
    expectProblem(res, 405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    const one = await ctx.http.post('/tokens/abc').set('BT-API-KEY', tenant.key).send({});
    expect(one.status).toBe(405);
    expect(one.headers.allow).toBe('DELETE, GET, HEAD, PATCH');
    expectProblem(await ctx.http.get('/nothing-here').set('BT-API-KEY', tenant.key), 404);
  });

  it('logs whether a key was sent, never the key', async () => {
    const from = ctx.logs.length;
    await ctx.http.get('/health');
    await ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key);
    const lines = ctx.logs.slice(from).filter((l) => l.includes('"req"'));
    expect(lines.some((l) => l.includes('"bt-api-key":"none sent"'))).toBe(true);
    expect(lines.some((l) => l.includes('"bt-api-key":"[redacted]"'))).toBe(true);
    expect(ctx.logs.join('\n')).not.toContain(tenant.key);
  });
});
