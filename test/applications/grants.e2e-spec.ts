import { Delegation1763794800000 } from '../../src/migrations/1763794800000-delegation';
import type { AccessRule } from '../../src/access/access-rules';
import { DELEGATE_EVERYTHING } from '../../src/access/grants';
import { ALL_PERMISSIONS, permissionsFor, TOKEN_PERMISSIONS } from '../../src/access/permissions';
import { accessRule, applicationBody } from '../support/application-factory';
import { expectProblem } from '../support/problems';
import { formulaBody, reactorsApi } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData } from '../support/token-factory';

/**
 * Issue 25 item 1 and issue 19 item 5: a management key grants, binds, updates, regenerates and deletes
 * only what it holds itself. Each case is an attack that worked before the rule.
 */
// One app for the file: every case works in a tenant of its own describe, none needs a fresh database.
let ctx: TestContext;
beforeAll(async () => {
  ctx = await TestContext.create();
});
afterAll(() => ctx.close());

describe('granting only what the caller holds', () => {
  let tenant: TestTenant;
  const post = (key: string, path: string, body: object) =>
    ctx.http.post(path).set('BT-API-KEY', key).send(body);

  beforeAll(async () => {
    tenant = await ctx.newTenant('Acme');
  });

  describe('creating applications', () => {
    it('refuses a management application with more permissions than the creator (application:create only)', async () => {
      const weak = await ctx.newApplication(tenant, 'management', ['application:create']);
      const res = await post(weak.key, '/applications', {
        name: 'Backdoor',
        type: 'management',
        permissions: permissionsFor('management'),
      });
      expectProblem(res, 403);
      expect(res.body.detail).toContain('application:delete');
      const list = await ctx.http.get('/applications?size=100').set('BT-API-KEY', tenant.key).expect(200);
      expect(list.body.data.map((a: { name: string }) => a.name)).not.toContain('Backdoor');
    });

    it('refuses a private application that reveals cards to a creator without token access', async () => {
      const weak = await ctx.newApplication(tenant, 'management', ['application:create']);
      const revealAll = accessRule({ container: '/', transform: 'reveal', permissions: ['token:read'] });
      expectProblem(
        await post(
          weak.key,
          '/applications',
          applicationBody({ permissions: ['token:read'], rules: [revealAll] }),
        ),
        403,
      );
      // Without rules token permissions act on every container: just as refused.
      expectProblem(
        await post(weak.key, '/applications', applicationBody({ permissions: ['token:use'] })),
        403,
      );
    });

    it('lets a creator delegate within its own rules: container, transform and permissions', async () => {
      const generalMask = accessRule({
        container: '/general/',
        transform: 'mask',
        permissions: ['token:read'],
      });
      const creator = await ctx.newApplication(
        tenant,
        'management',
        ['application:create'],
        [generalMask as unknown as AccessRule],
      );
      const within = accessRule({
        container: '/general/high/',
        transform: 'redact',
        permissions: ['token:read'],
      });
      const ok = await post(
        creator.key,
        '/applications',
        applicationBody({ permissions: [], rules: [within] }),
      );
      expect(ok.status).toBe(201);
      for (const beyond of [
        accessRule({ container: '/pci/', transform: 'mask', permissions: ['token:read'] }),
        accessRule({ container: '/', transform: 'mask', permissions: ['token:read'] }),
        accessRule({ container: '/general/', transform: 'reveal', permissions: ['token:read'] }),
        accessRule({ container: '/general/', transform: 'mask', permissions: ['token:read', 'token:use'] }),
      ]) {
        const res = await post(
          creator.key,
          '/applications',
          applicationBody({ permissions: [], rules: [beyond] }),
        );
        expectProblem(res, 403);
      }
    });

    it('counts rule order: an earlier rule showing less keeps a later, broader one from being granted', async () => {
      const pciRedact = accessRule({
        priority: 1,
        container: '/pci/',
        transform: 'redact',
        permissions: ['token:read'],
      });
      const allReveal = accessRule({
        priority: 2,
        container: '/',
        transform: 'reveal',
        permissions: ['token:read'],
      });
      const creator = await ctx.newApplication(
        tenant,
        'management',
        ['application:create'],
        [pciRedact as unknown as AccessRule, allReveal as unknown as AccessRule],
      );
      // A token in /general/ and /pci/ is redacted to the creator: revealing /general/ would reveal it.
      const reveal = accessRule({ container: '/general/', transform: 'reveal', permissions: ['token:read'] });
      expectProblem(
        await post(creator.key, '/applications', applicationBody({ permissions: [], rules: [reveal] })),
        403,
      );
      const redact = accessRule({ container: '/general/', transform: 'redact', permissions: ['token:read'] });
      const ok = await post(
        creator.key,
        '/applications',
        applicationBody({ permissions: [], rules: [redact] }),
      );
      expect(ok.status).toBe(201);
    });

    it("gives a management application's rules no token access of its own", async () => {
      const manager = await ctx.newApplication(
        tenant,
        'management',
        ['application:read'],
        [DELEGATE_EVERYTHING],
      );
      const reader = await ctx.newApplication(tenant, 'private', ['token:create', 'token:read']);
      const card = await post(reader.key, '/tokens', { type: 'card', data: cardData() }).expect(201);
      expectProblem(await ctx.http.get(`/tokens/${card.body.id}`).set('BT-API-KEY', manager.key), 403);
      expectProblem(await post(manager.key, '/tokens', { type: 'card', data: cardData() }), 403);
    });

    it("keeps the README's first session working with the tenant's own management key", async () => {
      const res = await post(
        tenant.key,
        '/applications',
        applicationBody({
          permissions: ['token:create', 'token:read', 'token:update', 'token:search', 'token:use'],
        }),
      );
      expect(res.status).toBe(201);
      const all = await post(tenant.key, '/applications', {
        name: 'Second admin',
        type: 'management',
        permissions: permissionsFor('management'),
        rules: [DELEGATE_EVERYTHING],
      });
      expect(all.status).toBe(201);
    });
  });

  describe('changing applications', () => {
    it('refuses an application adding permissions to itself (application:update only)', async () => {
      const weak = await ctx.newApplication(tenant, 'management', ['application:update']);
      const res = await ctx.http
        .put(`/applications/${weak.id}`)
        .set('BT-API-KEY', weak.key)
        .send({ name: 'me', permissions: ALL_PERMISSIONS.filter((p) => p.startsWith('application:')) });
      expectProblem(res, 403);
      const self = await ctx.http.get('/applications/key').set('BT-API-KEY', weak.key).expect(200);
      expect(self.body.permissions).toEqual(['application:update']);
    });

    it("refuses regenerating or updating another application's key without holding all it holds", async () => {
      const weak = await ctx.newApplication(tenant, 'management', ['application:update']);
      const owner = await ctx.newApplication(tenant, 'management', permissionsFor('management'), [
        DELEGATE_EVERYTHING,
      ]);
      const regen = await ctx.http.post(`/applications/${owner.id}/regenerate`).set('BT-API-KEY', weak.key);
      expectProblem(regen, 403);
      expect(regen.body.key).toBeUndefined();
      await ctx.http.get('/applications/key').set('BT-API-KEY', owner.key).expect(200);
      const update = await ctx.http
        .put(`/applications/${owner.id}`)
        .set('BT-API-KEY', weak.key)
        .send({ name: 'renamed', permissions: ['application:read'] });
      expectProblem(update, 403);
      expectProblem(await ctx.http.delete(`/applications/${owner.id}`).set('BT-API-KEY', weak.key), 403);
      await ctx.http.get('/applications/key').set('BT-API-KEY', owner.key).expect(200);
    });

    it('refuses rules on an existing application beyond what the updater holds', async () => {
      const generalMask = accessRule({
        container: '/general/',
        transform: 'mask',
        permissions: ['token:read'],
      });
      const updater = await ctx.newApplication(
        tenant,
        'management',
        ['application:update'],
        [generalMask as unknown as AccessRule],
      );
      const target = await ctx.newApplication(tenant, 'private', [], [generalMask as unknown as AccessRule]);
      const reveal = accessRule({ container: '/general/', transform: 'reveal', permissions: ['token:read'] });
      const put = (rules: object[]) =>
        ctx.http
          .put(`/applications/${target.id}`)
          .set('BT-API-KEY', updater.key)
          .send({ name: 'target', permissions: [], rules });
      expectProblem(await put([reveal]), 403);
      expect((await put([generalMask as unknown as AccessRule])).status).toBe(200);
    });
  });

  describe('binding applications to proxies and reactors', () => {
    const BT_THIEF = `module.exports = async function (req) {
      const token = await req.bt.tokens.retrieve(req.args.query.id);
      return { body: token, headers: {} };
    };`;

    it('refuses a proxy bound to an application whose token access the caller lacks (proxy:create only)', async () => {
      const weak = await ctx.newApplication(tenant, 'management', ['proxy:create', 'proxy:update']);
      const reader = await ctx.newApplication(tenant, 'private', ['token:read', 'token:use']);
      const body = {
        name: 'Exfiltration',
        destination_url: 'https://api.acme-payments.example/v1',
        require_auth: false,
        application: { id: reader.id },
        request_transform: { code: BT_THIEF },
      };
      const res = await post(weak.key, '/proxies', body);
      expectProblem(res, 403);
      // Nor can it re-point an existing proxy, made by the owner, at code of its own.
      const owned = await post(tenant.key, '/proxies', body).expect(201);
      expectProblem(
        await ctx.http.put(`/proxies/${owned.body.id}`).set('BT-API-KEY', weak.key).send(body),
        403,
      );
      // The tenant's own key holds everything, and may bind.
      expect((await post(tenant.key, '/proxies', body)).status).toBe(201);
    });

    it('refuses rewriting the formula code of a reactor bound to an application the caller does not cover', async () => {
      const weak = await ctx.newApplication(tenant, 'management', ['reactor:update']);
      const reader = await ctx.newApplication(tenant, 'private', ['token:read', 'token:use']);
      const formula = await reactorsApi(ctx, tenant).createFormula(formulaBody()).expect(201);
      const body = { name: 'R', configuration: { currency: 'USD' }, formula: { id: formula.body.id } };
      await reactorsApi(ctx, tenant)
        .create({ ...body, application: { id: reader.id } })
        .expect(201);
      const rewrite = formulaBody({ code: 'module.exports = async function (req) { return { raw: 1 }; };' });
      expectProblem(await reactorsApi(ctx, weak).updateFormula(formula.body.id, rewrite), 403);
      expect((await reactorsApi(ctx, tenant).updateFormula(formula.body.id, rewrite)).status).toBe(200);
    });

    it('refuses a reactor bound to an application whose token access the caller lacks (reactor:create only)', async () => {
      const weak = await ctx.newApplication(tenant, 'management', ['reactor:create', 'reactor:update']);
      const reader = await ctx.newApplication(tenant, 'private', ['token:read', 'token:use']);
      const formula = await reactorsApi(ctx, tenant).createFormula(formulaBody()).expect(201);
      const body = { name: 'R', configuration: { currency: 'USD' }, formula: { id: formula.body.id } };
      expectProblem(await reactorsApi(ctx, weak).create({ ...body, application: { id: reader.id } }), 403);
      const unbound = await reactorsApi(ctx, weak).create(body);
      expect(unbound.status).toBe(201);
      expectProblem(
        await reactorsApi(ctx, weak).update(unbound.body.id, { ...body, application: { id: reader.id } }),
        403,
      );
      expect(
        (await reactorsApi(ctx, tenant).create({ ...body, application: { id: reader.id } })).status,
      ).toBe(201);
    });
  });
});

describe('names without control characters', () => {
  let tenant: TestTenant;
  beforeAll(async () => {
    tenant = await ctx.newTenant('Names');
  });

  const HOSTILE = 'Acme\r\n\r\nReset your password at https://evil.example/\u202e';

  it.each([
    ['/applications', () => applicationBody({ name: HOSTILE })],
    ['/proxies', () => ({ name: HOSTILE, destination_url: 'https://api.acme-payments.example/v1' })],
    ['/reactor-formulas', () => formulaBody({ name: HOSTILE })],
  ])('strips them from the name of %s', async (path, body) => {
    const res = await ctx.http.post(path).set('BT-API-KEY', tenant.key).send(body());
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('Acme    Reset your password at https://evil.example/');
  });

  it('refuses a name made only of control characters', async () => {
    const res = await ctx.http
      .post('/applications')
      .set('BT-API-KEY', tenant.key)
      .send(applicationBody({ name: '\r\n\u200b' }));
    expectProblem(res, 400, ['name']);
  });
});

describe('the delegation migration', () => {
  it('gives the delegate-all rule to management applications holding every management permission, no other', async () => {
    const tenant = await ctx.newTenant('Upgraded');
    const full = await ctx.newApplication(tenant, 'management', permissionsFor('management'));
    const partial = await ctx.newApplication(tenant, 'management', ['application:create']);
    const runner = ctx.dataSource.createQueryRunner();
    try {
      await new Delegation1763794800000().up(runner);
    } finally {
      await runner.release();
    }
    const rulesOf = async (id: string): Promise<unknown> =>
      (
        await ctx.dataSource.query<{ rules: unknown }[]>('SELECT rules FROM applications WHERE id = $1', [id])
      )[0].rules;
    // The rule as it was then: the documents migration later adds document access to it.
    const tokensOnly = {
      ...DELEGATE_EVERYTHING,
      description: 'May grant any token access to the applications it manages',
      permissions: TOKEN_PERMISSIONS,
    };
    expect(await rulesOf(full.id)).toEqual([tokensOnly]);
    expect(await rulesOf(partial.id)).toEqual([]);
  });
});
