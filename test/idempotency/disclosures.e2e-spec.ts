import { randomUUID } from 'node:crypto';
import type { Permission } from '../../src/access/permissions';
import type { Response } from 'supertest';
import { auditRows } from '../support/audit';
import type { TestHttpsServer } from '../support/https-test-server';
import { ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp } from '../support/token-factory';

const KEY_HEADER = 'BT-IDEMPOTENCY-KEY';
const PERMISSIONS: Permission[] = ['token:create', 'token:read', 'token:delete', 'token:use', 'token:search'];
/** Cards revealed to every permission; narrowed to the second rule alone, cards are out of reach. */
const WIDE = [rule('/pci/', 'reveal', PERMISSIONS), rule('/general/', 'reveal', PERMISSIONS)];

/**
 * A reactor that charges the card with a payment processor (an HTTPS server on 127.0.0.1 counting its
 * charges) and answers the card number and the charge's number: what must not happen twice on a retry.
 */
const CHARGE_CODE = `module.exports = async function (req) {
  const res = await fetch(req.args.url + '/charges', { method: 'POST', body: { number: req.args.card } });
  return { raw: { card: req.args.card, charge: (await res.json()).charge } };
};`;
const CHARGE_PARAMETERS = [
  { name: 'card', type: 'string' },
  { name: 'url', type: 'string' },
];

/**
 * Issue 37, item 2: a keyed detokenization, search or reaction is never replayed from a stored answer alone.
 * A read's retry runs again; a reaction's retry (issue 38: its code runs once) is checked and audited under
 * today's rules before its kept answer is replayed. Either way it answers what the token, the reactor and the
 * application's rules allow today.
 */
describe('BT-IDEMPOTENCY-KEY on routes that disclose token data', () => {
  let fx: ProxyFixture;
  let ctx: TestContext;
  let tenant: TestTenant;
  let reactorId: string;
  let processor: TestHttpsServer;
  let charges = 0;

  beforeAll(async () => {
    fx = await proxyFixture();
    ctx = fx.ctx;
    processor = await fx.server((_req, res) => {
      charges++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ charge: charges }));
    });
    tenant = await ctx.newTenant();
    ({ reactorId } = await newReactor(ctx, tenant, {
      code: CHARGE_CODE,
      request_parameters: CHARGE_PARAMETERS,
    }));
  });
  afterAll(() => fx.close());

  /** Each disclosing read, asked for the card number of token `id`, and the operation it is audited as. */
  const routes: {
    name: string;
    operation: string;
    send: (apiKey: string, id: string) => ReturnType<TestContext['http']['post']>;
  }[] = [
    {
      name: 'POST /detokenize',
      operation: 'detokenize',
      send: (apiKey, id) =>
        ctx.http
          .post('/detokenize')
          .set('BT-API-KEY', apiKey)
          .send({ n: `{{ ${id} | json: '$.number' }}` }),
    },
    {
      name: 'POST /tokens/search',
      operation: 'search',
      send: (apiKey, id) =>
        ctx.http
          .post('/tokens/search')
          .set('BT-API-KEY', apiKey)
          .send({ query: `id:${id}` }),
    },
    {
      name: 'POST /v2/tokens/search',
      operation: 'search',
      send: (apiKey, id) =>
        ctx.http
          .post('/v2/tokens/search')
          .set('BT-API-KEY', apiKey)
          .send({ query: `id:${id}` }),
    },
  ];

  const operationCount = async (operation: string): Promise<number> =>
    (await auditRows(ctx, tenant.tenantId)).filter(
      (r) => r.operation === operation && r.outcome === 'success',
    ).length;

  /** The retry is answered as a request without a key is answered now: nothing replayed, no plaintext. */
  function expectCurrentAnswer(retry: Response, unkeyed: Response, number: string): void {
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(retry.status).toBe(unkeyed.status);
    expect(retry.text).not.toContain(number);
  }

  describe.each(routes)('$name', ({ operation, send }) => {
    it('runs a retry again, audited as a read, and answers it as today after the token is deleted', async () => {
      const app = await tokenApp(ctx, tenant, WIDE, PERMISSIONS);
      const { number } = cardData();
      const id = (await app.api.create({ type: 'card', data: { ...cardData(), number } }).expect(201)).body
        .id as string;
      const key = randomUUID();
      const first = await send(app.key, id).set(KEY_HEADER, key).expect(200);
      expect(first.text).toContain(number);

      const before = await operationCount(operation);
      const again = await send(app.key, id).set(KEY_HEADER, key).expect(200);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect(again.text).toContain(number);
      expect(await operationCount(operation)).toBeGreaterThan(before);

      await app.api.delete(id).expect(204);
      const retry = await send(app.key, id).set(KEY_HEADER, key);
      expectCurrentAnswer(retry, await send(app.key, id), number);
    });

    it('answers a retry under the rules of today once they are narrowed', async () => {
      const app = await tokenApp(ctx, tenant, WIDE, PERMISSIONS);
      const { number } = cardData();
      const id = (await app.api.create({ type: 'card', data: { ...cardData(), number } }).expect(201)).body
        .id as string;
      const key = randomUUID();
      expect((await send(app.key, id).set(KEY_HEADER, key).expect(200)).text).toContain(number);

      await ctx.http
        .put(`/applications/${app.id}`)
        .set('BT-API-KEY', tenant.key)
        .send({ name: 'narrowed', permissions: PERMISSIONS, rules: [WIDE[1]] })
        .expect(200);
      const retry = await send(app.key, id).set(KEY_HEADER, key);
      expectCurrentAnswer(retry, await send(app.key, id), number);
    });
  });

  describe('POST /reactors/:id/react', () => {
    const react = (apiKey: string, id: string, reactor = reactorId) =>
      reactorsApi(ctx, tenant).react(
        reactor,
        { args: { card: `{{ ${id} | json: '$.number' }}`, url: fx.url(processor) } },
        apiKey,
      );

    /** A card token of a new application allowed to use it, and a first keyed reaction on it (one charge). */
    async function reacted(reactor = reactorId): Promise<{
      app: Awaited<ReturnType<typeof tokenApp>>;
      id: string;
      number: string;
      key: string;
      first: Response;
    }> {
      const app = await tokenApp(ctx, tenant, WIDE, PERMISSIONS);
      const { number } = cardData();
      const id = (await app.api.create({ type: 'card', data: { ...cardData(), number } }).expect(201)).body
        .id as string;
      const key = randomUUID();
      const before = charges;
      const first = await react(app.key, id, reactor).set(KEY_HEADER, key).expect(200);
      expect(first.body.raw).toEqual({ card: number, charge: charges });
      expect(charges).toBe(before + 1);
      return { app, id, number, key, first };
    }

    const replays = async () =>
      (await auditRows(ctx, tenant.tenantId)).filter(
        (r) =>
          r.operation === 'react' && r.entity_id === reactorId && r.message === 'Reactor result replayed',
      );
    const uses = async (id: string): Promise<number> =>
      (
        await ctx.dataSource.query<unknown[]>(
          `SELECT 1 FROM audit_records WHERE tenant_id = $1 AND operation = 'detokenize' AND $2 = ANY(token_ids)`,
          [tenant.tenantId, id],
        )
      ).length;

    it('runs the code once: a retry gets the kept answer, replayed, after the checks and audit of today', async () => {
      const { app, id, key, first } = await reacted();
      const charged = charges;
      const [replayed, used] = [(await replays()).length, await uses(id)];

      for (let i = 0; i < 2; i++) {
        const retry = await react(app.key, id).set(KEY_HEADER, key).expect(200);
        expect(retry.headers['idempotent-replayed']).toBe('true');
        expect(retry.text).toBe(first.text);
        expect(charges).toBe(charged);
        // Recorded as the read it is: the token used, and that a reaction's result was replayed.
        expect(await replays()).toHaveLength(replayed + i + 1);
        expect(await uses(id)).toBe(used + i + 1);
      }
      expect((await replays()).at(-1)).toMatchObject({ actor_id: app.id, outcome: 'success' });
    });

    type App = Awaited<ReturnType<typeof tokenApp>>;
    const putApplication = (app: App, permissions: Permission[], rules: typeof WIDE) =>
      ctx.http
        .put(`/applications/${app.id}`)
        .set('BT-API-KEY', tenant.key)
        .send({ name: 'changed', permissions, rules })
        .expect(200);
    /** The rules grant the permissions: the same containers, every permission but token:use. */
    const noUse = PERMISSIONS.filter((p) => p !== 'token:use');

    /** What is taken away after the first reaction, and the status a request without a key now gets. */
    const revocations: {
      what: string;
      status: number;
      ownReactor?: boolean;
      revoke: (app: App, id: string, reactor: string) => Promise<unknown>;
    }[] = [
      { what: 'the token is deleted', status: 400, revoke: (app, id) => app.api.delete(id).expect(204) },
      {
        what: 'the rules are narrowed',
        status: 403,
        revoke: (app) => putApplication(app, PERMISSIONS, [WIDE[1]]),
      },
      {
        what: 'the application lost token:use',
        status: 403,
        revoke: (app) =>
          putApplication(app, noUse, [rule('/pci/', 'reveal', noUse), rule('/general/', 'reveal', noUse)]),
      },
      {
        what: 'the reactor is deleted',
        status: 404,
        ownReactor: true,
        revoke: (_app, _id, reactor) => reactorsApi(ctx, tenant).delete(reactor).expect(204),
      },
    ];

    it.each(revocations)(
      'answers a retry as today ($status), with no data and no run, once $what',
      async ({ status, ownReactor, revoke }) => {
        const reactor =
          ownReactor === true
            ? (await newReactor(ctx, tenant, { code: CHARGE_CODE, request_parameters: CHARGE_PARAMETERS }))
                .reactorId
            : reactorId;
        const { app, id, number, key } = await reacted(reactor);
        const charged = charges;
        await revoke(app, id, reactor);
        const retry = await react(app.key, id, reactor).set(KEY_HEADER, key);
        expectCurrentAnswer(retry, await react(app.key, id, reactor), number);
        expect(retry.status).toBe(status);
        expect(charges).toBe(charged);
      },
    );
  });

  it('still refuses the same key for another body with a 422', async () => {
    const app = await tokenApp(ctx, tenant, [], PERMISSIONS);
    const key = randomUUID();
    const detokenize = (n: string) =>
      ctx.http.post('/detokenize').set('BT-API-KEY', app.key).set(KEY_HEADER, key).send({ n });
    await detokenize('one').expect(200);
    await detokenize('two').expect(422);
  });
});
