import { TestContext, TestTenant } from '../support/test-app';
import {
  ALL_TOKEN_PERMISSIONS,
  cardData,
  CardData,
  rule,
  tokenApp,
  tokensApi,
  TokensApi,
} from '../support/token-factory';

/**
 * An update must not show its author more of a token's data than the author's access rules do: not through
 * a new mask, a new fingerprint expression, a new search index, nor by moving the token.
 */
describe('PATCH /tokens/<id> is no way around the access rules', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let writer: TokensApi;
  /** A browser-side key: create and update, never read. */
  let browser: TokensApi;
  let revealer: TokensApi;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    writer = (await tokenApp(ctx, tenant)).api;
    browser = tokensApi(
      ctx,
      (await ctx.newApplication(tenant, 'public', ['token:create', 'token:update'])).key,
    );
    revealer = (await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)])).api;
  });
  afterAll(() => ctx.close());

  async function newCard(): Promise<{ id: string; data: CardData; fingerprint: string }> {
    const data = cardData();
    const res = await writer
      .create({ type: 'card', data, search_indexes: ['{{ data.number | last4 }}'] })
      .expect(201);
    return { id: res.body.id, data, fingerprint: res.body.fingerprint };
  }

  it('a new mask is refused to a caller that cannot reveal: the update response and later mask reads stay masked', async () => {
    const card = await newCard();
    const reader = (await tokenApp(ctx, tenant, [rule('/', 'mask', ['token:read'])], ['token:read'])).api;
    for (const mask of [{ number: '{{ data.number }}' }, '{{ data | stringify }}']) {
      const res = await browser.patch(card.id, { mask }).expect(403);
      expect(res.text).not.toContain(card.data.number);
    }
    const read = await reader.get(card.id).expect(200);
    expect(read.text).not.toContain(card.data.number);
    expect(read.body.data.number).toBe(`XXXXXXXXXXXX${card.data.number.slice(-4)}`);
    // A rule-less private application reads masked too, and cannot widen the mask either
    await writer.patch(card.id, { mask: { number: '{{ data.number | reveal_last: 8 }}' } }).expect(403);
  });

  it('a new fingerprint expression is refused, so no keyed hash of a part of the number can be compared', async () => {
    const card = await newCard();
    const bin = card.data.number.slice(0, 6);
    const patched = await browser
      .patch(card.id, { fingerprint_expression: '{{ data.number | slice: 0, 6 }}' })
      .expect(403);
    expect(patched.body).not.toHaveProperty('fingerprint');
    const guess = await browser
      .create({ type: 'card', data: cardData(), fingerprint_expression: `{{ "${bin}" }}` })
      .expect(201);
    const stored = (await revealer.get(card.id).expect(200)).body.fingerprint;
    expect(stored).toBe(card.fingerprint);
    expect(stored).not.toBe(guess.body.fingerprint);
  });

  it('a new search index is refused, so its success or failure tells nothing about the data', async () => {
    const card = await newCard();
    const probe = (prefix: string) => ({
      search_indexes: [`{% if data.number contains "${prefix}" %}x{% endif %}`],
    });
    await browser.patch(card.id, probe(card.data.number.slice(0, 8))).expect(403);
    await browser.patch(card.id, probe('00000000')).expect(403);
  });

  it('still lets the caller change data and metadata, and drop or keep the expressions', async () => {
    const card = await newCard();
    const res = await browser
      .patch(card.id, {
        data: { expiration_month: 3 },
        metadata: { source: 'checkout' },
        search_indexes: ['{{ data.number | last4 }}'],
      })
      .expect(200);
    expect(res.text).not.toContain(card.data.number);
    // an expiry deletes the token: it needs token:delete, which a browser key never holds
    await browser.patch(card.id, { expires_at: '1/1/2099' }).expect(403);
    await browser.patch(card.id, { search_indexes: null, mask: null }).expect(200);
  });

  it('a caller that can reveal the data may change the expressions', async () => {
    const card = await newCard();
    const res = await revealer
      .patch(card.id, {
        mask: { number: '{{ data.number | reveal_last: 6 }}' },
        fingerprint_expression: '{{ data.number }}-{{ data.expiration_year }}',
        search_indexes: ['{{ data.number | card_bin }}'],
      })
      .expect(200);
    expect(res.body.data.number).toBe(`XXXXXXXXXX${card.data.number.slice(-6)}`);
  });

  it('a move into containers where the caller reads more is refused', async () => {
    const card = await newCard();
    const mover = (
      await tokenApp(
        ctx,
        tenant,
        [
          rule('/pci/', 'mask', ['token:update'], 1),
          rule('/general/', 'reveal', ['token:read', 'token:update'], 2),
        ],
        [],
      )
    ).api;
    await mover.get(card.id).expect(403);
    const moved = await mover.patch(card.id, { containers: ['/general/'] }).expect(403);
    expect(moved.text).not.toContain(card.data.number);
    await mover.get(card.id).expect(403);
    expect((await revealer.get(card.id).expect(200)).body.containers).toEqual(['/pci/high/']);
    // Moving where it sees no more is still allowed
    await mover.patch(card.id, { containers: ['/pci/low/'] }).expect(200);
  });
});
