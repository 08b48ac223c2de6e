import { MetricsService } from '../../src/metrics/metrics.service';
import { expectProblem } from '../support/problems';
import { TestContext, TestTenant } from '../support/test-app';
import {
  ALL_TOKEN_PERMISSIONS,
  cardData,
  cardNumber,
  countTokens,
  rule,
  tokenApp,
  tokensApi,
  TokensApi,
} from '../support/token-factory';

const LIMIT = 20;

/** Deduplication is no oracle: it only ever finds tokens the caller could read and write anyway (issue 25.2). */
describe('deduplication and the access rules', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let revealer: TokensApi;

  beforeAll(async () => {
    ctx = await TestContext.create({ env: { DEDUP_WRITES_PER_MINUTE: String(LIMIT) } });
    tenant = await ctx.newTenant();
    revealer = (await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)])).api;
  });
  afterAll(() => ctx.close());

  const publicKey = async (): Promise<TokensApi> =>
    tokensApi(
      ctx,
      (
        await ctx.newApplication(
          tenant,
          'public',
          ['token:create', 'token:update'],
          [rule('/general/', 'mask', ['token:create', 'token:update'])],
        )
      ).key,
    );

  it('a public key creating only in /general/ learns nothing of a stored /pci/high/ card', async () => {
    const data = cardData();
    const stored = await revealer.create({ type: 'card', data, deduplicate_token: true }).expect(201);
    const browser = await publicKey();
    const res = await browser
      .create({ type: 'card', data, containers: ['/general/'], deduplicate_token: true })
      .expect(201);
    expect(res.body.id).not.toBe(stored.body.id);
    expect(res.body).not.toHaveProperty('_extras');
    expect(res.body.containers).toEqual(['/general/']);
    expect(res.text).not.toContain(stored.body.id);
    // the same caller deduplicating again never gets an existing id back either: it cannot read its own tokens
    const again = await browser
      .create({ type: 'card', data, containers: ['/general/'], deduplicate_token: true })
      .expect(201);
    expect(again.body.id).not.toBe(res.body.id);
    expect(again.body).not.toHaveProperty('_extras');
  });

  it('guessing through /tokenize finds nothing: every guess becomes a new token', async () => {
    const data = cardData();
    const stored = await revealer.create({ type: 'card', data }).expect(201);
    const browser = await publicKey();
    const guesses = Array.from({ length: 10 }, (_, i) => ({
      type: 'card',
      data: { number: i === 7 ? data.number : cardNumber() },
      containers: ['/general/'],
      deduplicate_token: true,
    }));
    const res = await browser.tokenize(guesses).expect(200);
    expect(res.text).not.toContain(stored.body.id);
    expect(res.text).not.toContain('deduplicated');
    expect(new Set(res.body.map((t: { id: string }) => t.id)).size).toBe(10);
  });

  it('a token the caller may read but not write (create) there is not a duplicate', async () => {
    const data = cardData();
    const stored = await revealer.create({ type: 'card', data }).expect(201);
    const reader = await tokenApp(ctx, tenant, [
      rule('/', 'mask', ['token:read']),
      rule('/general/', 'mask', ['token:create']),
    ]);
    const res = await reader.api
      .create({ type: 'card', data, containers: ['/general/'], deduplicate_token: true })
      .expect(201);
    expect(res.body.id).not.toBe(stored.body.id);
    expect(res.body).not.toHaveProperty('_extras');
  });

  it('a caller who may read and write the original still gets it back', async () => {
    const data = cardData();
    const stored = await revealer.create({ type: 'card', data }).expect(201);
    const pci = await tokenApp(ctx, tenant, [rule('/pci/', 'mask', ['token:create', 'token:read'])]);
    const res = await pci.api.create({ type: 'card', data, deduplicate_token: true }).expect(201);
    expect(res.body).toMatchObject({ id: stored.body.id, _extras: { deduplicated: true } });
  });

  it('an update making a token equal to one the caller cannot read saves it as it is', async () => {
    const data = cardData();
    const stored = await revealer.create({ type: 'card', data }).expect(201);
    const browser = await publicKey();
    const own = await browser
      .create({ type: 'card', data: cardData(), containers: ['/general/'] })
      .expect(201);
    const res = await browser
      .patch(own.body.id, { data: { number: data.number }, deduplicate_token: true })
      .expect(200);
    expect(res.body.id).toBe(own.body.id);
    expect(res.text).not.toContain(stored.body.id);
    expect((await revealer.get(own.body.id).expect(200)).body.data.number).toBe(data.number);
  });

  describe(`at most ${LIMIT} deduplicating writes a minute per application`, () => {
    it('answers 429 with Retry-After past the limit; plain writes and other applications go on', async () => {
      const app = await tokenApp(ctx, tenant);
      for (let i = 0; i < LIMIT; i++) {
        await app.api.create({ type: 'token', data: `v${i}`, deduplicate_token: true }).expect(201);
      }
      const before = await countTokens(ctx, tenant.tenantId);
      const limited = await app.api.create({ type: 'token', data: 'over', deduplicate_token: true });
      expectProblem(limited, 429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expectProblem(
        await app.api.tokenize([{ type: 'token', data: 'over', deduplicate_token: true }, 'plain']),
        429,
      );
      expect(await countTokens(ctx, tenant.tenantId)).toBe(before);
      await app.api.create({ type: 'token', data: 'plain' }).expect(201);
      await app.api.tokenize(['plain', { type: 'token', data: 'plain' }]).expect(200);
      const other = await tokenApp(ctx, tenant);
      await other.api.create({ type: 'token', data: 'over', deduplicate_token: true }).expect(201);
    });

    it('counts a /tokenize request by its deduplicating definitions, all or nothing', async () => {
      const app = await tokenApp(ctx, tenant);
      const batch = (n: number): object[] =>
        Array.from({ length: n }, (_, i) => ({ type: 'token', data: `b${i}`, deduplicate_token: true }));
      await app.api.tokenize(batch(LIMIT - 2)).expect(200);
      const before = await countTokens(ctx, tenant.tenantId);
      expectProblem(await app.api.tokenize(batch(3)), 429);
      expect(await countTokens(ctx, tenant.tenantId)).toBe(before);
      await app.api.tokenize(batch(2)).expect(200);
    });

    it('exports deduplicating writes by outcome on /metrics, without tenant or application ids', async () => {
      const res = { text: await ctx.get(MetricsService).text() };
      const series = res.text.split('\n').filter((l) => l.startsWith('token_vault_deduplicating_writes'));
      const value = (outcome: string): number =>
        Number(series.find((l) => l.includes(`outcome="${outcome}"`))?.split(' ')[1] ?? 0);
      expect(value('created')).toBeGreaterThan(0);
      expect(value('deduplicated')).toBeGreaterThan(0);
      expect(value('limited')).toBeGreaterThan(0);
      expect(series.join('\n')).not.toContain(tenant.tenantId);
    });
  });
});
