import { randomUUID } from 'node:crypto';
import type { Permission } from '../../src/access/permissions';
import type { Response } from 'supertest';
import { auditRows } from '../support/audit';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp } from '../support/token-factory';

const KEY_HEADER = 'BT-IDEMPOTENCY-KEY';
const PERMISSIONS: Permission[] = ['token:create', 'token:read', 'token:delete', 'token:use', 'token:search'];
/** Cards revealed to every permission; narrowed to the second rule alone, cards are out of reach. */
const WIDE = [rule('/pci/', 'reveal', PERMISSIONS), rule('/general/', 'reveal', PERMISSIONS)];

/**
 * Issue 37, item 2: a keyed detokenization, search or reaction is never replayed from a stored answer. Its
 * retry runs again, so it answers what the token and the application's rules allow today, and is audited.
 */
describe('BT-IDEMPOTENCY-KEY on routes that disclose token data', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let reactorId: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    ({ reactorId } = await newReactor(ctx, tenant, {
      request_parameters: [{ name: 'card', type: 'string' }],
    }));
  });
  afterAll(() => ctx.close());

  /** Each disclosing route, asked for the card number of token `id`, and the operation it is audited as. */
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
    {
      name: 'POST /reactors/:id/react',
      operation: 'react',
      send: (apiKey, id) =>
        reactorsApi(ctx, tenant).react(
          reactorId,
          { args: { card: `{{ ${id} | json: '$.number' }}` } },
          apiKey,
        ),
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

  it('still refuses the same key for another body with a 422', async () => {
    const app = await tokenApp(ctx, tenant, [], PERMISSIONS);
    const key = randomUUID();
    const detokenize = (n: string) =>
      ctx.http.post('/detokenize').set('BT-API-KEY', app.key).set(KEY_HEADER, key).send({ n });
    await detokenize('one').expect(200);
    await detokenize('two').expect(422);
  });
});
