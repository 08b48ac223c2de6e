import type { Response } from 'supertest';
import { TestContext, TestTenant } from '../support/test-app';
import {
  accessRule,
  applicationBody,
  Body,
  createApplication,
  secretLooking,
  withoutField,
} from '../support/application-factory';
import { expectProblem } from '../support/problems';
import { hostileBodies, hostileRun, STACK_TRACE } from '../support/hostile-input';

describe('errors', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  describe('validation of POST /applications', () => {
    it.each<[string, Body, string[]]>([
      ['name missing', withoutField(applicationBody(), 'name'), ['name']],
      ['name empty', applicationBody({ name: '' }), ['name']],
      ['name of 201 characters', applicationBody({ name: 'n'.repeat(201) }), ['name']],
      ['name not a string', applicationBody({ name: 42 }), ['name']],
      ['type missing', withoutField(applicationBody(), 'type'), ['type']],
      ['type unknown', applicationBody({ type: 'superuser' }), ['type']],
      ['an unknown member', applicationBody({ color: 'blue' }), ['color']],
      ['permissions not an array', applicationBody({ permissions: 'token:read' }), ['permissions']],
      [
        'a rule without priority',
        applicationBody({ rules: [withoutField(accessRule(), 'priority')] }),
        ['rules[0].priority'],
      ],
      [
        'a rule with a bad transform',
        applicationBody({ rules: [accessRule(), accessRule({ transform: 'show' })] }),
        ['rules[1].transform'],
      ],
      [
        'an unknown member in a rule',
        applicationBody({ rules: [accessRule({ owner: 'me' })] }),
        ['rules[0].owner'],
      ],
      ['several problems at once', { type: 'superuser', color: 'blue' }, ['name', 'type', 'color']],
    ])('answers 400 naming the field for %s', async (_label, body, paths) => {
      const res = await createApplication(ctx, tenant, body);
      expectProblem(res, 400, paths);
      expect(res.body.title).toBe('Bad Request');
      expect(res.body.type).toMatch(/^https?:\/\//);
    });

    it('does not repeat the field name or echo the value in messages', async () => {
      const res = await createApplication(ctx, tenant, applicationBody({ type: 'superuser', color: 'blue' }));
      expectProblem(res, 400, ['type', 'color']);
      expect(res.body.errors.color).toEqual(['is not allowed']);
      expect(JSON.stringify(res.body)).not.toContain('superuser');
      expect(JSON.stringify(res.body)).not.toContain('blue');
    });

    it('accepts a name of exactly 200 characters', async () => {
      const res = await createApplication(ctx, tenant, applicationBody({ name: 'n'.repeat(200) }));
      expect(res.status).toBe(201);
    });

    it('answers 400, not 500, for a NUL character the database cannot store', async () => {
      // A name loses its control characters (README, Security notes) before it reaches the database.
      const named = await createApplication(ctx, tenant, applicationBody({ name: 'Check\u0000out' }));
      expect({ status: named.status, name: named.body.name as unknown }).toEqual({
        status: 201,
        name: 'Check out',
      });
      const rule = accessRule({ description: 'nul \u0000 inside' });
      expectProblem(await createApplication(ctx, tenant, applicationBody({ rules: [rule] })), 400);
    });
  });

  describe('requests the framework rejects', () => {
    it('answers malformed JSON with a 400 problem', async () => {
      for (const text of ['{"name":', '{name: "x"}', "{'a': 1}", '{"a":1}}', '']) {
        const res = await ctx.http
          .post('/applications')
          .set('BT-API-KEY', tenant.key)
          .set('Content-Type', 'application/json')
          .send(text);
        expectProblem(res, 400);
      }
    });

    it('answers an unknown route with a 404 problem, with or without a key', async () => {
      expectProblem(await ctx.http.get('/no-such-route'), 404);
      expectProblem(await ctx.http.get('/applications/key/extra').set('BT-API-KEY', tenant.key), 404);
      // A known path with another method is a 405 (with Allow), not a 404.
      const wrongMethod = await ctx.http.patch('/applications').set('BT-API-KEY', tenant.key).send({});
      expectProblem(wrongMethod, 405);
      expect(wrongMethod.headers.allow).toBe('GET, HEAD, POST');
    });

    it('answers a body over 1 MB with a 413 problem', async () => {
      const res = await createApplication(ctx, tenant, applicationBody({ name: 'x'.repeat(1024 * 1024) }));
      expectProblem(res, 413);
    });

    it('answers a non-uuid id with a 400 naming it on every route', async () => {
      for (const id of ['abc', '123', 'key', '00000000-0000-0000-0000-00000000000g', "1' OR '1'='1"]) {
        const path = `/applications/${encodeURIComponent(id)}`;
        const responses = [
          await ctx.http.get(path).set('BT-API-KEY', tenant.key),
          await ctx.http.put(path).set('BT-API-KEY', tenant.key).send({ name: 'x' }),
          await ctx.http.delete(path).set('BT-API-KEY', tenant.key),
          await ctx.http.post(`${path}/regenerate`).set('BT-API-KEY', tenant.key),
        ];
        // `key` is its own route for GET
        for (const res of id === 'key' ? responses.slice(1) : responses) {
          expectProblem(res, 400, ['id']);
        }
      }
    });
  });

  describe('hostile input', () => {
    it('recognizes a stack trace when it sees one (so the checks below are not vacuous)', () => {
      expect(STACK_TRACE.test(new Error('probe').stack ?? '')).toBe(true);
      expect(STACK_TRACE.test(JSON.stringify({ detail: 'One or more validation errors occurred.' }))).toBe(
        false,
      );
    });

    it('never answers 5xx, a stack trace or an echoed secret to hostile bodies', async () => {
      const secret = secretLooking('body');
      const target = await ctx.newApplication(tenant, 'private', ['token:read']);
      const post = (b: string) =>
        ctx.http
          .post('/applications')
          .set('BT-API-KEY', tenant.key)
          .set('Content-Type', 'application/json')
          .send(b);
      const put = (b: string) =>
        ctx.http
          .put(`/applications/${target.id}`)
          .set('BT-API-KEY', tenant.key)
          .set('Content-Type', 'application/json')
          .send(b);
      const requests = hostileBodies(secret).flatMap(([label, body]): [string, () => Promise<Response>][] => [
        [`POST ${label}`, () => post(body)],
        [`PUT ${label}`, () => put(body)],
      ]);
      expect(requests.length).toBeGreaterThan(200);
      expect(await hostileRun(secret, requests)).toEqual([]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      // Nothing hostile became a management application or leaked into the stored rows
      const rows: Record<string, unknown>[] = await ctx.dataSource.query(
        'SELECT type, permissions, rules FROM applications',
      );
      expect(rows.filter((r) => r.type === 'management')).toHaveLength(1);
      expect(JSON.stringify(rows)).not.toContain('polluted');
      expect(ctx.logs.join('\n')).not.toContain(secret);
    });

    it('never answers 5xx to hostile query strings, ids and content types', async () => {
      const secret = secretLooking('query');
      const queries = [
        `page=${secret}`,
        `size=${secret}`,
        'page=99999999999999999999',
        'page=9007199254740993',
        'page=1e308',
        'size=-1',
        'size=1.5',
        'page=0x10',
        'size=1&size=2',
        'page[]=1',
        'page[__proto__][polluted]=1',
        '__proto__=1',
        'constructor[prototype][polluted]=1',
        `id=${secret}`,
        `type=${secret}`,
        'id=' + Array.from({ length: 200 }, () => '00000000-0000-4000-8000-000000000000').join('&id='),
        `%E0%A4%A=1`,
        'page=%00',
      ];
      const contentTypes: [string, string][] = [
        ['text/plain', secret],
        ['application/x-www-form-urlencoded', `name=${secret}&type=${secret}`],
        ['application/xml', `<name>${secret}</name>`],
        ['application/json; charset=utf-16', JSON.stringify(applicationBody())],
        ['application/merge-patch+json', JSON.stringify(applicationBody({ type: secret }))],
      ];
      const get = (path: string) => (): Promise<Response> => ctx.http.get(path).set('BT-API-KEY', tenant.key);
      const requests: [string, () => Promise<Response>][] = [
        ...queries.map((q): [string, () => Promise<Response>] => [`?${q}`, get(`/applications?${q}`)]),
        ...[secret, '%00', '..%2F..%2Fetc%2Fpasswd', 'x'.repeat(5000)].map(
          (id): [string, () => Promise<Response>] => [
            `/applications/${id.slice(0, 40)}`,
            get(`/applications/${id}`),
          ],
        ),
        ...contentTypes.map(([type, body]): [string, () => Promise<Response>] => [
          type,
          () =>
            ctx.http.post('/applications').set('BT-API-KEY', tenant.key).set('Content-Type', type).send(body),
        ]),
      ];
      expect(await hostileRun(secret, requests)).toEqual([]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });
});
