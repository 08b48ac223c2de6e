import { DELEGATE_EVERYTHING } from '../../src/access/grants';
import type { Test } from 'supertest';
import type { Permission } from '../../src/access/permissions';
import { TestContext, TestTenant } from '../support/test-app';
import { API_KEY_FORMAT, applicationBody, createApplication } from '../support/application-factory';
import { expectProblem } from '../support/problems';

const MISSING_ID = '00000000-0000-4000-8000-000000000000';
const APPLICATION_PERMISSIONS = [
  'application:create',
  'application:read',
  'application:update',
  'application:delete',
] as const;
const PRIVATE_PERMISSIONS: Permission[] = [
  'token:create',
  'token:read',
  'token:update',
  'token:delete',
  'token:use',
  'token:search',
];

/** Every /applications route with the permission it needs; `id` is an application of the caller's tenant. */
interface Route {
  name: string;
  needs: Permission;
  ok: number;
  send: (key: string) => Test;
}

/** Every /applications route with its permission and success status; `id` is an application of the caller's tenant. */
function applicationRoutes(ctx: TestContext, id: string): Route[] {
  const http = ctx.http;
  return [
    {
      name: 'POST /applications',
      needs: 'application:create',
      ok: 201,
      send: (k) => http.post('/applications').set('BT-API-KEY', k).send(applicationBody()),
    },
    {
      name: 'GET /applications',
      needs: 'application:read',
      ok: 200,
      send: (k) => http.get('/applications').set('BT-API-KEY', k),
    },
    {
      name: 'GET /applications/:id',
      needs: 'application:read',
      ok: 200,
      send: (k) => http.get(`/applications/${id}`).set('BT-API-KEY', k),
    },
    {
      name: 'PUT /applications/:id',
      needs: 'application:update',
      ok: 200,
      send: (k) => http.put(`/applications/${id}`).set('BT-API-KEY', k).send({ name: 'Renamed' }),
    },
    {
      name: 'POST /applications/:id/regenerate',
      needs: 'application:update',
      ok: 200,
      send: (k) => http.post(`/applications/${id}/regenerate`).set('BT-API-KEY', k),
    },
    {
      name: 'DELETE /applications/:id',
      needs: 'application:delete',
      ok: 204,
      send: (k) => http.delete(`/applications/${id}`).set('BT-API-KEY', k),
    },
  ];
}

/** Sends every route in order with `key`; returns `route name -> status` and checks each 403 body. */
async function statusesOf(routes: Route[], key: string): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  for (const route of routes) {
    const res = await route.send(key);
    statuses[route.name] = res.status;
    if (res.status === 403) {
      expectProblem(res, 403);
    }
  }
  return statuses;
}

describe('authentication and authorization', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  describe('401 without a valid BT-API-KEY', () => {
    const badHeaders: [string, (validKey: string) => Record<string, string>][] = [
      ['no header', () => ({})],
      ['an empty header', () => ({ 'BT-API-KEY': '' })],
      ['a bearer token in the header', () => ({ 'BT-API-KEY': 'Bearer x' })],
      ['an unknown key of the right format', () => ({ 'BT-API-KEY': `key_${'A'.repeat(44)}` })],
      ['a valid key with a changed case', (k) => ({ 'BT-API-KEY': k.toUpperCase() })],
      ['a valid key with extra characters', (k) => ({ 'BT-API-KEY': `${k}x` })],
      ['a valid key in Authorization instead', (k) => ({ Authorization: `Bearer ${k}` })],
    ];

    it.each(badHeaders)('refuses %s', async (_label, headers) => {
      for (const path of ['/applications', '/applications/key', '/permissions']) {
        const res = await ctx.http.get(path).set(headers(tenant.key));
        expectProblem(res, 401);
        expect(JSON.stringify(res.body)).not.toContain(tenant.key);
      }
    });

    it('refuses the old key right after a regenerate and accepts the new one', async () => {
      const app = await ctx.newApplication(tenant, 'management', ['application:read']);
      await ctx.http.get('/applications').set('BT-API-KEY', app.key).expect(200);

      const res = await ctx.http
        .post(`/applications/${app.id}/regenerate`)
        .set('BT-API-KEY', tenant.key)
        .expect(200);
      expect(res.body).toMatchObject({ id: app.id, key: expect.stringMatching(API_KEY_FORMAT) });
      expect(res.body.key).not.toBe(app.key);

      expectProblem(await ctx.http.get('/applications').set('BT-API-KEY', app.key), 401);
      await ctx.http.get('/applications').set('BT-API-KEY', res.body.key).expect(200);
      // The regenerating key is untouched
      await ctx.http.get('/applications').set('BT-API-KEY', tenant.key).expect(200);
    });

    it('refuses the key of a deleted application', async () => {
      const app = await ctx.newApplication(tenant, 'private', ['token:read']);
      await ctx.http.get('/applications/key').set('BT-API-KEY', app.key).expect(200);
      await ctx.http.delete(`/applications/${app.id}`).set('BT-API-KEY', tenant.key).expect(204);
      expectProblem(await ctx.http.get('/applications/key').set('BT-API-KEY', app.key), 401);
    });

    it('lets a holder of everything an application holds regenerate its key, after which only the new one works', async () => {
      const own = await ctx.newApplication(tenant, 'management', ['application:update']);
      // An application never regenerates (or updates) itself: the tenant's own management key does it.
      expectProblem(
        await ctx.http.post(`/applications/${own.id}/regenerate`).set('BT-API-KEY', own.key),
        403,
      );
      const res = await ctx.http
        .post(`/applications/${own.id}/regenerate`)
        .set('BT-API-KEY', tenant.key)
        .expect(200);
      expectProblem(await ctx.http.get('/applications/key').set('BT-API-KEY', own.key), 401);
      await ctx.http.get('/applications/key').set('BT-API-KEY', res.body.key).expect(200);
    });
  });

  describe('403 without the permission', () => {
    it.each([
      ['private', PRIVATE_PERMISSIONS],
      ['public', ['token:create', 'token:update']],
    ] as const)('refuses every application route to a %s application', async (type, permissions) => {
      const caller = await ctx.newApplication(tenant, type, [...permissions]);
      const target = await ctx.newApplication(tenant, 'private', ['token:read']);
      for (const id of [target.id, MISSING_ID]) {
        const routes = applicationRoutes(ctx, id);
        const all403 = Object.fromEntries(routes.map((r) => [r.name, 403]));
        expect(await statusesOf(routes, caller.key)).toEqual(all403);
      }
      // Nothing happened to the target
      await ctx.http.get(`/applications/${target.id}`).set('BT-API-KEY', tenant.key).expect(200);
      await ctx.http.get('/applications/key').set('BT-API-KEY', target.key).expect(200);
    });

    it.each(APPLICATION_PERMISSIONS)(
      'refuses the routes of %s to a management application without it',
      async (missing) => {
        const caller = await ctx.newApplication(
          tenant,
          'management',
          APPLICATION_PERMISSIONS.filter((p) => p !== missing),
          [DELEGATE_EVERYTHING],
        );
        const target = await ctx.newApplication(tenant, 'private', ['token:read']);
        const routes = applicationRoutes(ctx, target.id);
        const expected = Object.fromEntries(routes.map((r) => [r.name, r.needs === missing ? 403 : r.ok]));
        expect(await statusesOf(routes, caller.key)).toEqual(expected);
        const denied = await routes.find((r) => r.needs === missing)!.send(caller.key);
        expect(denied.body.detail).toContain(missing);
      },
    );

    it('refuses GET /applications to a management application created with application:create only', async () => {
      const caller = await ctx.newApplication(
        tenant,
        'management',
        ['application:create'],
        [DELEGATE_EVERYTHING],
      );
      expectProblem(await ctx.http.get('/applications').set('BT-API-KEY', caller.key), 403);
      const created = await createApplication(ctx, { ...tenant, key: caller.key });
      expect(created.status).toBe(201);
    });

    it('answers GET /applications/key and GET /permissions to any valid key', async () => {
      const caller = await ctx.newApplication(tenant, 'public', ['token:create']);
      const self = await ctx.http.get('/applications/key').set('BT-API-KEY', caller.key).expect(200);
      expect(self.body).toMatchObject({
        id: caller.id,
        tenant_id: tenant.tenantId,
        type: 'public',
        permissions: ['token:create'],
      });
      await ctx.http.get('/permissions').set('BT-API-KEY', caller.key).expect(200);
    });
  });

  describe('permissions by application type', () => {
    it('lists every permission with the application types that may hold it', async () => {
      const res = await ctx.http.get('/permissions').set('BT-API-KEY', tenant.key).expect(200);
      const table = Object.fromEntries(
        res.body.map((p: { type: string; application_types: string[] }) => [
          p.type,
          [...p.application_types].sort(),
        ]),
      );
      const expected: Record<string, string[]> = {};
      const grant = (types: string[], names: string[]): void => names.forEach((n) => (expected[n] = types));
      grant(['private', 'public'], ['token:create', 'token:update']);
      grant(['private'], ['token:read', 'token:delete', 'token:use', 'token:search']);
      grant(
        ['management'],
        [
          ...APPLICATION_PERMISSIONS,
          ...['create', 'read', 'update', 'delete'].flatMap((op) => [
            `reactor:${op}`,
            `proxy:${op}`,
            `tenant:invitation:${op}`,
          ]),
          'tenant:read',
          'tenant:update',
          'tenant:member:read',
          'tenant:member:delete',
        ],
      );
      expect(table).toMatchObject(expected);
      expect(table['token:read']).toEqual(['private']);
      for (const permission of res.body) {
        expect(permission.description).toEqual(expect.stringMatching(/^[A-Z].{10,}/));
      }
    });

    it('lists only the permissions an application type may hold with application_type', async () => {
      const pub = await ctx.http
        .get('/permissions')
        .query({ application_type: 'public' })
        .set('BT-API-KEY', tenant.key)
        .expect(200);
      expect(pub.body.map((p: { type: string }) => p.type).sort()).toEqual([
        'token-intent:create',
        'token:create',
        'token:update',
      ]);
      expect(pub.body[0]).toEqual({
        type: expect.any(String),
        description: expect.any(String),
        application_types: ['public', 'private'],
      });
      const bad = await ctx.http
        .get('/permissions')
        .query({ application_type: 'root' })
        .set('BT-API-KEY', tenant.key);
      expectProblem(bad, 400, ['application_type']);
    });

    it.each([
      ['management', 'token:read'],
      ['management', 'token:use'],
      ['public', 'token:read'],
      ['public', 'application:read'],
      ['private', 'application:read'],
      ['private', 'reactor:create'],
    ])('refuses to create a %s application holding %s', async (type, permission) => {
      const res = await createApplication(ctx, tenant, applicationBody({ type, permissions: [permission] }));
      expectProblem(res, 400, ['permissions[0]']);
      expect(res.body.errors['permissions[0]'].join(' ')).toContain(permission);
    });

    it('refuses an unknown permission and a non-token permission in an access rule', async () => {
      const body = applicationBody({
        permissions: ['token:read', 'token:teleport'],
        rules: [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['application:read'] }],
      });
      expectProblem(await createApplication(ctx, tenant, body), 400, [
        'permissions[1]',
        'rules[0].permissions[0]',
      ]);
    });

    it('refuses to grant a forbidden permission on update', async () => {
      const app = await ctx.newApplication(tenant, 'public', ['token:create']);
      const res = await ctx.http
        .put(`/applications/${app.id}`)
        .set('BT-API-KEY', tenant.key)
        .send({ name: 'Browser', permissions: ['token:create', 'token:read'] });
      expectProblem(res, 400, ['permissions[1]']);
      const unchanged = await ctx.http
        .get(`/applications/${app.id}`)
        .set('BT-API-KEY', tenant.key)
        .expect(200);
      expect(unchanged.body.permissions).toEqual(['token:create']);
    });
  });

  it('never writes an API key to the logs', async () => {
    const app = await ctx.newApplication(tenant, 'private', ['token:read']);
    const regenerated = await ctx.http
      .post(`/applications/${app.id}/regenerate`)
      .set('BT-API-KEY', tenant.key)
      .expect(200);
    const unknownKey = `key_${'B'.repeat(44)}`;
    for (const key of [tenant.key, app.key, regenerated.body.key, unknownKey]) {
      await ctx.http.get('/applications/key').set('BT-API-KEY', key);
      await ctx.http.get('/applications').set('BT-API-KEY', key);
      await ctx.http.get('/no-such-route').set('BT-API-KEY', key);
    }
    const logs = ctx.logs.join('\n');
    // The requests were logged, with the header redacted, so the check below is not vacuous
    expect(logs).toContain('/applications/key');
    expect(logs).toContain('[redacted]');
    for (const key of [tenant.key, app.key, regenerated.body.key, unknownKey]) {
      expect(logs).not.toContain(key);
      expect(logs).not.toContain(key.slice(4));
    }
  });
});
