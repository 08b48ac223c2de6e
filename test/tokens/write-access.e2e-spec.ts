import { BtBridge } from '../../src/sandbox-bridges/bt-bridge';
import { statusOf } from '../support/problems';
import { TestApplication, TestContext, TestTenant } from '../support/test-app';
import {
  ALL_TOKEN_PERMISSIONS,
  cardData,
  CardData,
  cardNumber,
  countTokens,
  rule,
  tokenApp,
  tokensApi,
  TokensApi,
} from '../support/token-factory';

/** What an update answers a caller that cannot read the token: who and where, nothing derived from data. */
const UNREADABLE_UPDATE_FIELDS = [
  'containers',
  'created_at',
  'created_by',
  'id',
  'modified_at',
  'modified_by',
  'tenant_id',
  'type',
];

describe('writes need every container and answer only what the caller may read', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let revealer: TokensApi;
  /** A browser key: create and update, never read or delete. */
  let browser: TokensApi;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    revealer = (await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)])).api;
    browser = tokensApi(
      ctx,
      (await ctx.newApplication(tenant, 'public', ['token:create', 'token:update'])).key,
    );
  });
  afterAll(() => ctx.close());

  async function newCard(extra: object = {}): Promise<{ id: string; data: CardData; fingerprint: string }> {
    const data = cardData();
    const res = await revealer
      .create({ type: 'card', data, metadata: { customer: 'acme-secret' }, ...extra })
      .expect(201);
    return { id: res.body.id, data, fingerprint: res.body.fingerprint };
  }

  describe('token:update without token:read (issue 19.4)', () => {
    it('an empty patch answers neither data, mask, metadata nor fingerprint', async () => {
      const card = await newCard();
      await browser.get(card.id).expect(403);
      const res = await browser.patch(card.id, {}).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(UNREADABLE_UPDATE_FIELDS);
      expect(res.text).not.toContain(card.data.number.slice(-4));
      expect(res.text).not.toContain('acme-secret');
      expect(res.text).not.toContain(card.fingerprint);
    });

    it('changing expires_at needs token:delete: a browser key cannot expire a token it may not delete', async () => {
      const card = await newCard();
      await browser.delete(card.id).expect(403);
      const soon = new Date(Date.now() + 3_000).toISOString();
      const res = await browser.patch(card.id, { expires_at: soon }).expect(403);
      expect(res.body.detail).toContain('token:delete');
      await browser.patch(card.id, { expires_at: null, metadata: { a: 'b' } }).expect(200);
      const stored = await revealer.get(card.id).expect(200);
      expect(stored.body.expires_at).toBeNull();
      // token:update and token:delete together may set it
      await revealer.patch(card.id, { expires_at: '1/1/2099' }).expect(200);
      await browser.patch(card.id, { expires_at: '1/2/2099' }).expect(403);
      await browser.patch(card.id, { expires_at: null }).expect(403);
      expect((await revealer.get(card.id).expect(200)).body.expires_at).toBe('2099-01-01T00:00:00.000Z');
    });

    it('may still overwrite data (what token:update grants), and the answer stays redacted', async () => {
      const card = await newCard();
      const replacement = cardData();
      const res = await browser.patch(card.id, { data: replacement }).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(UNREADABLE_UPDATE_FIELDS);
      expect((await revealer.get(card.id).expect(200)).body.data).toEqual(replacement);
    });

    it('a reader with a redact rule gets no masked data from an update either', async () => {
      const card = await newCard();
      const app = (
        await tokenApp(ctx, tenant, [
          rule('/', 'redact', ['token:read'], 1),
          rule('/', 'mask', ['token:update'], 2),
        ])
      ).api;
      const res = await app.patch(card.id, { metadata: { a: 'b' } }).expect(200);
      expect(res.body).not.toHaveProperty('data');
      expect(res.body).not.toHaveProperty('mask');
      expect(res.body.metadata).toEqual({ customer: 'acme-secret', a: 'b' });
      expect(res.body.fingerprint).toBe(card.fingerprint);
    });
  });

  describe('every container of a write must be permitted (issue 25.4)', () => {
    let generalOnly: TestApplication & { api: TokensApi };
    beforeAll(async () => {
      generalOnly = await tokenApp(ctx, tenant, [rule('/general/', 'mask', ALL_TOKEN_PERMISSIONS)]);
    });

    it('a create listing a permitted and a forbidden container is refused and stores nothing', async () => {
      const before = await countTokens(ctx, tenant.tenantId);
      const res = await generalOnly.api
        .create({ type: 'card', data: cardData(), containers: ['/general/', '/pci/high/'] })
        .expect(403);
      expect(res.body.detail).toContain('/pci/high/');
      await generalOnly.api
        .tokenize({ c: { type: 'card', data: cardData(), containers: ['/pci/high/', '/general/'] } })
        .expect(403);
      expect(await countTokens(ctx, tenant.tenantId)).toBe(before);
      await generalOnly.api.create({ type: 'card', data: cardData(), containers: ['/general/'] }).expect(201);
    });

    it('an update may neither add a forbidden container nor touch a token in one', async () => {
      const own = await generalOnly.api
        .create({ type: 'card', data: cardData(), containers: ['/general/'] })
        .expect(201);
      await generalOnly.api.patch(own.body.id, { containers: ['/general/', '/pci/high/'] }).expect(403);
      expect((await revealer.get(own.body.id).expect(200)).body.containers).toEqual(['/general/']);

      const shared = await newCard({ containers: ['/general/', '/pci/high/'] });
      await generalOnly.api.patch(shared.id, { data: { expiration_month: 1 } }).expect(403);
      expect((await revealer.get(shared.id).expect(200)).body.data).toEqual(shared.data);
    });

    it('the bt bridge of reactors and transforms applies the same rule', async () => {
      const principal = await ctx.principalOf(generalOnly);
      const bt = ctx.get(BtBridge).handlers(principal);
      const before = await countTokens(ctx, tenant.tenantId);
      const body = { type: 'card', data: { number: cardNumber() }, containers: ['/general/', '/pci/high/'] };
      expect(await statusOf(bt['bt.tokens.create']([body]))).toBe(403);
      expect(await statusOf(bt['bt.tokenize']([{ c: body }]))).toBe(403);
      const shared = await newCard({ containers: ['/general/', '/pci/high/'] });
      expect(await statusOf(bt['bt.tokens.update']([shared.id, { metadata: { a: 'b' } }]))).toBe(403);
      expect(await countTokens(ctx, tenant.tenantId)).toBe(before + 1);
    });
  });
});
