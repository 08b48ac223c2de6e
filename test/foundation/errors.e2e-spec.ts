import type { Response } from 'supertest';
import { TestContext, TestTenant } from '../support/test-app';
import { accessRule, applicationBody, Body, createApplication, expectProblem, secretLooking, withoutField } from './factories';

/** Values of the wrong JSON type (or shape, or size) for any field. */
function wrongValues(): [string, unknown][] {
  let deep: unknown = 'bottom';
  for (let i = 0; i < 2000; i++) {
    deep = { nested: [deep] };
  }
  return [
    ['zero', 0],
    ['a negative float', -1.5],
    ['a huge number', 1e308],
    ['true', true],
    ['null', null],
    ['an empty array', []],
    ['an array of nulls', [null, null]],
    ['nested arrays', [[[]]]],
    ['an empty object', {}],
    ['an object', { a: { b: 1 } }],
    ['a huge string', 'x'.repeat(200_000)],
    ['a NUL character', 'a\u0000b'],
    ['deeply nested garbage', deep],
  ];
}

/** Raw bodies: each a hostile JSON document (written as text: a `__proto__` literal would not survive JSON.stringify). */
function rawBodies(secret: string): [string, string][] {
  const valid = JSON.stringify(applicationBody()).slice(1, -1);
  return [
    ['null', 'null'],
    ['an empty array', '[]'],
    ['an array of bodies', `[${JSON.stringify(applicationBody())}]`],
    ['a number', '42'],
    ['a string', JSON.stringify(secret)],
    ['an empty object', '{}'],
    ['__proto__ pollution', `{${valid},"__proto__":{"polluted":"yes","type":"management"}}`],
    ['constructor.prototype pollution', `{${valid},"constructor":{"prototype":{"polluted":"yes"}}}`],
    ['__proto__ inside a rule', `{${valid},"rules":[{"__proto__":{"polluted":"yes"},"priority":1}]}`],
    ['__proto__ as the only member', '{"__proto__":{"polluted":"yes"}}'],
    ['duplicate members', `{${valid},"type":"management","type":"private"}`],
    ['a secret in an unknown member', `{${valid},"password":${JSON.stringify(secret)}}`],
    ['a secret as the type', JSON.stringify(applicationBody({ type: secret }))],
    ['a secret as a permission', JSON.stringify(applicationBody({ permissions: [secret] }))],
    ['a secret in a rule', JSON.stringify(applicationBody({ rules: [accessRule({ container: secret, transform: secret })] }))],
    ['a secret as a nested name', JSON.stringify(applicationBody({ name: { value: secret } }))],
  ];
}

/** Every hostile body for POST and PUT: wrong values for each field and each rule field, plus the raw documents. */
function hostileBodies(secret: string): [string, string][] {
  const bodies: [string, string][] = [];
  for (const [label, value] of wrongValues()) {
    for (const field of ['name', 'type', 'permissions', 'rules']) {
      bodies.push([`${field} = ${label}`, JSON.stringify(applicationBody({ [field]: value }))]);
    }
    for (const field of ['description', 'priority', 'container', 'transform', 'permissions']) {
      bodies.push([`rules[0].${field} = ${label}`, JSON.stringify(applicationBody({ rules: [accessRule({ [field]: value })] }))]);
    }
    bodies.push([`permissions[0] = ${label}`, JSON.stringify(applicationBody({ permissions: [value] }))]);
  }
  return [...bodies, ...rawBodies(secret)];
}

/** A stack frame (`at fn (file:line)`), a source path or a module path: internals that must never reach a caller. */
const STACK_TRACE = /\bat [\w$.<>[\] ]+ \(|\bat (?:async )?\/|\.[jt]s:\d+|node_modules/;

/** What is wrong with the answer to a hostile request; empty when it is a clean 2xx or 4xx problem. */
function faultsOf(res: Response, secret: string): string[] {
  const faults: string[] = [];
  if (res.status >= 500) {
    faults.push(`status ${res.status}`);
  }
  if (STACK_TRACE.test(res.text)) {
    faults.push('stack trace');
  }
  if (res.text.includes(secret)) {
    faults.push('echoes the secret');
  }
  if (res.status >= 400 && (!/^application\/problem\+json/.test(res.headers['content-type'] ?? '') || res.body.status !== res.status)) {
    faults.push('not a problem-details body');
  }
  return faults;
}

/** Sends each request and collects every faulty answer, so one run shows all of them. */
async function hostileRun(secret: string, requests: [string, () => Promise<Response>][]): Promise<string[]> {
  const offenders: string[] = [];
  for (const [label, send] of requests) {
    const res = await send();
    const faults = faultsOf(res, secret);
    if (faults.length > 0) {
      offenders.push(`${label}: ${faults.join(', ')}`);
    }
  }
  return offenders;
}

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
      ['a rule without priority', applicationBody({ rules: [withoutField(accessRule(), 'priority')] }), ['rules[0].priority']],
      ['a rule with a bad transform', applicationBody({ rules: [accessRule(), accessRule({ transform: 'show' })] }), ['rules[1].transform']],
      ['an unknown member in a rule', applicationBody({ rules: [accessRule({ owner: 'me' })] }), ['rules[0].owner']],
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
      expect(res.body.errors.color).toEqual(['property color should not exist']);
      expect(JSON.stringify(res.body)).not.toContain('superuser');
      expect(JSON.stringify(res.body)).not.toContain('blue');
    });

    it('accepts a name of exactly 200 characters', async () => {
      const res = await createApplication(ctx, tenant, applicationBody({ name: 'n'.repeat(200) }));
      expect(res.status).toBe(201);
    });

    it('answers 400, not 500, for a NUL character the database cannot store', async () => {
      expectProblem(await createApplication(ctx, tenant, applicationBody({ name: 'Check\u0000out' })), 400);
      const rule = accessRule({ description: 'nul \u0000 inside' });
      expectProblem(await createApplication(ctx, tenant, applicationBody({ rules: [rule] })), 400);
    });
  });

  describe('requests the framework rejects', () => {
    it('answers malformed JSON with a 400 problem', async () => {
      for (const text of ['{"name":', '{name: "x"}', "{'a': 1}", '{"a":1}}', '']) {
        const res = await ctx.http.post('/applications').set('BT-API-KEY', tenant.key).set('Content-Type', 'application/json').send(text);
        expectProblem(res, 400);
      }
    });

    it('answers an unknown route with a 404 problem, with or without a key', async () => {
      expectProblem(await ctx.http.get('/no-such-route'), 404);
      expectProblem(await ctx.http.get('/applications/key/extra').set('BT-API-KEY', tenant.key), 404);
      expectProblem(await ctx.http.patch('/applications').set('BT-API-KEY', tenant.key).send({}), 404);
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
    it('never answers 5xx, a stack trace or an echoed secret to hostile bodies', async () => {
      const secret = secretLooking('body');
      const target = await ctx.newApplication(tenant, 'private', ['token:read']);
      const post = (b: string) => ctx.http.post('/applications').set('BT-API-KEY', tenant.key).set('Content-Type', 'application/json').send(b);
      const put = (b: string) => ctx.http.put(`/applications/${target.id}`).set('BT-API-KEY', tenant.key).set('Content-Type', 'application/json').send(b);
      const requests = hostileBodies(secret).flatMap(([label, body]): [string, () => Promise<Response>][] => [
        [`POST ${label}`, () => post(body)],
        [`PUT ${label}`, () => put(body)],
      ]);
      expect(requests.length).toBeGreaterThan(200);
      expect(await hostileRun(secret, requests)).toEqual([]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      // Nothing hostile became a management application or leaked into the stored rows
      const rows: Record<string, unknown>[] = await ctx.dataSource.query('SELECT type, permissions, rules FROM applications');
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
        ...[secret, '%00', '..%2F..%2Fetc%2Fpasswd', 'x'.repeat(5000)].map((id): [string, () => Promise<Response>] => [
          `/applications/${id.slice(0, 40)}`,
          get(`/applications/${id}`),
        ]),
        ...contentTypes.map(([type, body]): [string, () => Promise<Response>] => [
          type,
          () => ctx.http.post('/applications').set('BT-API-KEY', tenant.key).set('Content-Type', type).send(body),
        ]),
      ];
      expect(await hostileRun(secret, requests)).toEqual([]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });
});
