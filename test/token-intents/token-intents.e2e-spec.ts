import { Clock } from '../../src/common/clock';
import { PurgeService } from '../../src/jobs/purge.service';
import { TestClock } from '../support/test-clock';
import { TestApplication, TestContext, TestTenant } from '../support/test-app';
import { cardData, rule } from '../support/token-factory';

const CARD = cardData({
  number: '4242424242424242',
  expiration_month: 12,
  expiration_year: 2030,
  cvc: '123',
});
const DAY_MS = 24 * 60 * 60 * 1000;

describe('token intents', () => {
  const clock = new TestClock();
  const world: { ctx?: TestContext; acme?: TestTenant; page?: TestApplication; backend?: TestApplication } =
    {};
  const ctx = (): TestContext => world.ctx as TestContext;
  const key = (app: 'page' | 'backend'): string => (world[app] as TestApplication).key;

  beforeAll(async () => {
    world.ctx = await TestContext.create({ overrides: [{ provide: Clock, useValue: clock }] });
    world.acme = await ctx().newTenant();
    world.page = await ctx().newApplication(world.acme, 'public', ['token-intent:create']);
    world.backend = await ctx().newApplication(
      world.acme,
      'private',
      ['token-intent:read', 'token-intent:delete'],
      [rule('/', 'reveal', ['token:create', 'token:read'])],
    );
  });
  afterAll(() => ctx().close());
  afterEach(() => clock.reset());

  const createIntent = (body: unknown = { type: 'card', data: CARD }, as = key('page')) =>
    ctx()
      .http.post('/token-intents')
      .set('BT-API-KEY', as)
      .send(body as object);
  const convert = (body: Record<string, unknown>, as = key('backend')) =>
    ctx().http.post('/tokens').set('BT-API-KEY', as).send(body);

  it('answers a card intent with its details, never the data, expiring in 24 hours', async () => {
    clock.set(new Date('2026-12-07T10:00:00.000Z'));
    const res = await createIntent();
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tenant_id: world.acme?.tenantId,
      type: 'card',
      card: { bin: '42424242', last4: '4242', brand: 'visa', expiration_month: 12, expiration_year: 2030 },
      fingerprint: expect.any(String),
      created_by: world.page?.id,
      created_at: '2026-12-07T10:00:00.000Z',
      expires_at: '2026-12-08T10:00:00.000Z',
    });
    expect(JSON.stringify(res.body)).not.toContain('424242424242');
    const stored: { data: Buffer }[] = await ctx().dataSource.query(
      'SELECT data FROM token_intents WHERE id = $1',
      [res.body.id],
    );
    expect(stored[0].data.toString('latin1')).not.toContain('4242424242424242');
    const read = await ctx().http.get(`/token-intents/${res.body.id}`).set('BT-API-KEY', key('backend'));
    expect([read.status, read.body]).toEqual([200, res.body]);
  });

  it('refuses invalid data as POST /tokens does, and callers without the permission', async () => {
    const bad = await createIntent({ type: 'card', data: { ...CARD, number: '4242424242424241' } });
    expect([bad.status, bad.body.errors]).toEqual([400, { 'data.number': ['must pass the Luhn check'] }]);
    expect((await createIntent({ data: CARD })).status).toBe(400);
    expect((await createIntent({ type: 'card', data: CARD, extra: 1 })).status).toBe(400);
    const other = await ctx().newApplication(world.acme as TestTenant, 'public', ['token:create']);
    expect((await createIntent(undefined, other.key)).status).toBe(403);
    const id = (await createIntent()).body.id as string;
    expect((await ctx().http.get(`/token-intents/${id}`).set('BT-API-KEY', key('page'))).status).toBe(403);
    expect((await ctx().http.get('/token-intents/not-a-uuid').set('BT-API-KEY', key('backend'))).status).toBe(
      400,
    );
  });

  it('converts into a token of the intent data exactly once, deleting the intent with it', async () => {
    const intent = (await createIntent()).body as { id: string; fingerprint: string };
    const res = await convert({ token_intent_id: intent.id, metadata: { order: '7' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      type: 'card',
      fingerprint: intent.fingerprint,
      metadata: { order: '7' },
    });
    const token = await ctx().http.get(`/tokens/${res.body.id}`).set('BT-API-KEY', key('backend'));
    expect(token.body.data).toEqual(CARD);
    const again = await convert({ token_intent_id: intent.id });
    expect([again.status, Object.keys(again.body.errors)]).toEqual([400, ['token_intent_id']]);
    const read = await ctx().http.get(`/token-intents/${intent.id}`).set('BT-API-KEY', key('backend'));
    expect(read.status).toBe(404);
  });

  it('lets only one of two concurrent conversions make a token', async () => {
    const { id } = (await createIntent()).body as { id: string };
    const results = await Promise.all([convert({ token_intent_id: id }), convert({ token_intent_id: id })]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 400]);
  });

  it("refuses an expired intent, another tenant's, and one sent with type or data", async () => {
    const { id } = (await createIntent()).body as { id: string };
    expect((await convert({ token_intent_id: id, type: 'card' })).status).toBe(400);
    expect((await convert({ token_intent_id: id, data: CARD })).status).toBe(400);
    const globex = await ctx().newTenant('Globex');
    const thief = await ctx().newApplication(
      globex,
      'private',
      ['token-intent:read', 'token-intent:delete'],
      [rule('/', 'reveal', ['token:create'])],
    );
    expect((await convert({ token_intent_id: id }, thief.key)).status).toBe(400);
    expect((await ctx().http.get(`/token-intents/${id}`).set('BT-API-KEY', thief.key)).status).toBe(404);
    expect((await ctx().http.delete(`/token-intents/${id}`).set('BT-API-KEY', thief.key)).status).toBe(404);
    clock.advance(DAY_MS + 1);
    expect((await convert({ token_intent_id: id })).status).toBe(400);
    expect((await ctx().http.get(`/token-intents/${id}`).set('BT-API-KEY', key('backend'))).status).toBe(404);
  });

  it('is purged by the scheduled job once expired, and deleted on request', async () => {
    const kept = (await createIntent()).body.id as string;
    const deleted = (await createIntent()).body.id as string;
    const del = await ctx().http.delete(`/token-intents/${deleted}`).set('BT-API-KEY', key('backend'));
    expect(del.status).toBe(204);
    expect(
      (await ctx().http.delete(`/token-intents/${deleted}`).set('BT-API-KEY', key('backend'))).status,
    ).toBe(404);
    const count = async (): Promise<number> =>
      Number(
        (await ctx().dataSource.query('SELECT count(*) AS n FROM token_intents WHERE id = $1', [kept]))[0].n,
      );
    clock.advance(DAY_MS - 1000);
    await ctx().get(PurgeService).runTokenIntents();
    expect(await count()).toBe(1);
    clock.advance(2000);
    await ctx().get(PurgeService).runTokenIntents();
    expect(await count()).toBe(0);
  });

  it('records what was done with each intent in the audit trail', async () => {
    const { id } = (await createIntent()).body as { id: string };
    await convert({ token_intent_id: id });
    const rows: { operation: string; actor_id: string }[] = await ctx().dataSource.query(
      "SELECT operation, actor_id FROM audit_records WHERE entity_type = 'token_intent' AND entity_id = $1 ORDER BY created_at",
      [id],
    );
    expect(rows).toEqual([
      { operation: 'create', actor_id: world.page?.id },
      { operation: 'convert', actor_id: world.backend?.id },
    ]);
  });
});
