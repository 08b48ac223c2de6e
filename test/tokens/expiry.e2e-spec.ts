import { Clock } from '../../src/common/clock';
import { PurgeService } from '../../src/jobs/purge.service';
import { DetokenizeService } from '../../src/tokens/detokenize.service';
import { TokensService } from '../../src/tokens/tokens.service';
import { statusOf } from '../support/problems';
import { TestClock } from '../support/test-clock';
import { TestContext, TestTenant } from '../support/test-app';
import {
  ALL_TOKEN_PERMISSIONS,
  cardData,
  ISO_WITH_OFFSET,
  rawToken,
  rule,
  tokenApp,
  TokensApi,
} from '../support/token-factory';

const HOUR = 3_600_000;

describe('token expiry', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: TokensApi;
  /** Replaces the app's Clock: real time until a test sets it. */
  const clock = new TestClock();

  beforeAll(async () => {
    ctx = await TestContext.create({ overrides: [{ provide: Clock, useValue: clock }] });
    tenant = await ctx.newTenant();
    api = (await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)])).api;
  });
  afterAll(() => ctx.close());
  afterEach(() => clock.reset());

  describe('expires_at formats', () => {
    it.each([
      ['an ISO date-time with an offset', '2099-01-02T03:04:05+02:00', '2099-01-02T01:04:05.000Z'],
      ['an ISO date-time with Z', '2099-01-02T03:04:05.250Z', '2099-01-02T03:04:05.250Z'],
      ['an ISO date-time without an offset, as UTC', '2099-01-02T03:04:05', '2099-01-02T03:04:05.000Z'],
      ['a short date M/D/YYYY, as midnight UTC', '1/2/2099', '2099-01-02T00:00:00.000Z'],
      ['a short date MM/DD/YYYY', '12/31/2099', '2099-12-31T00:00:00.000Z'],
    ])('accepts %s', async (_name, input, instant) => {
      const res = await api.create({ type: 'token', data: 'x', expires_at: input }).expect(201);
      expect(res.body.expires_at).toMatch(ISO_WITH_OFFSET);
      expect(new Date(res.body.expires_at).toISOString()).toBe(instant);
      const got = await api.get(res.body.id).expect(200);
      expect(new Date(got.body.expires_at).toISOString()).toBe(instant);
    });

    it('leaves expires_at null when absent', async () => {
      const res = await api.create({ type: 'token', data: 'x' }).expect(201);
      expect(res.body.expires_at).toBeNull();
    });

    it.each(['2001-01-01T00:00:00Z', new Date(Date.now() - 1000).toISOString(), '1/1/2001'])(
      'rejects the past date %p with 400',
      async (input) => {
        const res = await api.create({ type: 'token', data: 'x', expires_at: input }).expect(400);
        expect(res.body.errors).toHaveProperty(['expires_at']);
      },
    );

    it.each(['tomorrow', '2099-13-01T00:00:00Z', '2/30/2099', '31/12/2099', '2099-01-02 03:04', ''])(
      'rejects the malformed date %p with 400',
      async (input) => {
        const res = await api.create({ type: 'token', data: 'x', expires_at: input }).expect(400);
        expect(res.body.errors).toHaveProperty(['expires_at']);
      },
    );

    it('an update can set, change and clear expires_at, past dates rejected', async () => {
      const created = await api.create({ type: 'token', data: 'x' }).expect(201);
      const set = await api.patch(created.body.id, { expires_at: '6/1/2099' }).expect(200);
      expect(new Date(set.body.expires_at).toISOString()).toBe('2099-06-01T00:00:00.000Z');
      await api.patch(created.body.id, { expires_at: '1/1/2001' }).expect(400);
      const cleared = await api.patch(created.body.id, { expires_at: null }).expect(200);
      expect(cleared.body.expires_at).toBeNull();
    });
  });

  describe('an expired token', () => {
    it('is invisible from the moment it expires, before the purge runs; the purge then tombstones it', async () => {
      const t0 = Date.now();
      const data = cardData();
      const expiring = await api
        .create({
          type: 'card',
          data,
          expires_at: new Date(t0 + HOUR).toISOString(),
          metadata: { batch: 'exp' },
        })
        .expect(201);
      const lasting = await api
        .create({ type: 'card', data: cardData(), metadata: { batch: 'exp' } })
        .expect(201);
      const later = await api
        .create({
          type: 'token',
          data: 'y',
          expires_at: new Date(t0 + 3 * HOUR).toISOString(),
          metadata: { batch: 'exp' },
        })
        .expect(201);
      const id = expiring.body.id;

      clock.set(t0 + HOUR - 1000);
      await api.get(id).expect(200);

      clock.set(t0 + 2 * HOUR);
      await api.get(id).expect(404);
      const list = await api.list('?metadata.batch=exp').expect(200);
      expect(list.body.data.map((t: { id: string }) => t.id).sort()).toEqual(
        [lasting.body.id, later.body.id].sort(),
      );
      expect(list.body.pagination.total_items).toBe(2);
      expect((await api.list(`?id=${id}`).expect(200)).body.data).toEqual([]);
      await api.patch(id, { metadata: { batch: 'revived' } }).expect(404);
      await api.delete(id).expect(404);
      const fresh = await api.create({ type: 'card', data, deduplicate_token: true }).expect(201);
      expect(fresh.body.id).not.toBe(id);
      expect(fresh.body).not.toHaveProperty('_extras');

      // still stored until the purge runs
      const before = await rawToken(ctx, tenant.tenantId, id);
      expect(before.data).not.toBeNull();
      expect(before.deleted_at).toBeNull();

      await ctx.get(PurgeService).run();

      const after = await rawToken(ctx, tenant.tenantId, id);
      expect(after).toMatchObject({ data: null, fingerprint: null, metadata: null, type: 'card' });
      expect(after.deleted_at).not.toBeNull();
      expect(after.created_at).not.toBeNull();
      for (const other of [lasting.body.id, later.body.id]) {
        const row = await rawToken(ctx, tenant.tenantId, other);
        expect(row.data).not.toBeNull();
        expect(row.deleted_at).toBeNull();
      }
      await api.get(later.body.id).expect(200);
    });

    it('purgeExpired(now) purges exactly the tokens past their expiry and reports how many', async () => {
      const t0 = Date.now();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await api.create({
          type: 'token',
          data: `p${i}`,
          expires_at: new Date(t0 + HOUR).toISOString(),
        });
        ids.push(res.body.id);
      }
      const keep = (
        await api.create({ type: 'token', data: 'keep', expires_at: new Date(t0 + 5 * HOUR).toISOString() })
      ).body.id;
      const tokens = ctx.get(TokensService);

      expect(await tokens.purgeExpired(new Date(t0 + 30 * 60_000))).toBe(0);
      expect(await tokens.purgeExpired(new Date(t0 + 2 * HOUR), 2)).toBe(3);
      expect(await tokens.purgeExpired(new Date(t0 + 2 * HOUR))).toBe(0);
      for (const id of ids) {
        const row = await rawToken(ctx, tenant.tenantId, id);
        expect(row.data).toBeNull();
        expect(row.deleted_at).not.toBeNull();
      }
      expect((await rawToken(ctx, tenant.tenantId, keep)).data).not.toBeNull();
    });

    it('expires at the same moment for every service that reads the clock: reads, detokenization, purge', async () => {
      expect(ctx.get(Clock)).toBe(clock);
      const t0 = Date.now();
      const user = await tokenApp(ctx, tenant, [
        rule('/', 'reveal', [...ALL_TOKEN_PERMISSIONS, 'token:use']),
      ]);
      const id = (
        await user.api
          .create({ type: 'token', data: 'soon', expires_at: new Date(t0 + HOUR).toISOString() })
          .expect(201)
      ).body.id;
      const principal = await ctx.principalOf(user);
      const detokenize = ctx.get(DetokenizeService);

      clock.set(t0 + HOUR - 1);
      await user.api.get(id).expect(200);
      expect(await detokenize.detokenize(principal, `{{ ${id} }}`)).toBe('soon');
      await ctx.get(PurgeService).run();
      expect((await rawToken(ctx, tenant.tenantId, id)).deleted_at).toBeNull();

      clock.advance(2);
      await user.api.get(id).expect(404);
      expect(await statusOf(detokenize.detokenize(principal, `{{ ${id} }}`))).toBe(400);
      await ctx.get(PurgeService).run();
      expect((await rawToken(ctx, tenant.tenantId, id)).deleted_at).not.toBeNull();
    });
  });
});
