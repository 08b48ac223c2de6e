import { TestContext, TestTenant } from '../support/test-app';
import { bankData, cardData, countTokens, tokenApp, TokensApi } from '../support/token-factory';

/**
 * A token id is shown to every caller that may see the token, redacting ones included, and travels in request
 * paths and logs: an id (custom or rendered from an alias expression) must not carry a data value (spec §2.1).
 */
describe('token ids never carry the token data', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: TokensApi;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    api = (await tokenApp(ctx, tenant, [], ['token:create', 'token:read'])).api;
  });
  afterAll(() => ctx.close());

  it('refuses an alias or a custom id holding the card number, the account number or a string token, echoing neither', async () => {
    const card = cardData();
    const bank = bankData();
    const before = await countTokens(ctx);
    const bodies: [object, string][] = [
      [{ type: 'card', data: card, id: '{{ data.number }}' }, card.number],
      [{ type: 'card', data: card, id: 'card-{{ data.number }}' }, card.number],
      [{ type: 'card', data: card, id: `card-${card.number}` }, card.number],
      [
        { type: 'bank', data: bank, id: '{{ data.account_number }}-{{ data.routing_number }}' },
        bank.account_number,
      ],
      [{ type: 'token', data: '123-45-6789', id: 'ssn-{{ data }}' }, '123-45-6789'],
    ];
    for (const [body, secret] of bodies) {
      const res = await api.create(body).expect(400);
      expect(res.body.errors).toEqual({ id: ['must not contain a value of the token data'] });
      expect(res.text).not.toContain(secret);
    }
    const tokenized = await api
      .tokenize({ card: { type: 'card', data: card, id: '{{ data.number }}' } })
      .expect(400);
    expect(tokenized.body.errors).toHaveProperty(['card.id']);
    expect(tokenized.text).not.toContain(card.number);
    expect(await countTokens(ctx)).toBe(before);
    expect(ctx.logs.join('\n')).not.toContain(card.number);
  });

  it('still accepts aliases that keep only parts of the data, and unrelated custom ids', async () => {
    const card = cardData();
    const alias = await api
      .create({ type: 'card', data: card, id: '{{ data.number | alias_card }}' })
      .expect(201);
    expect(alias.body.id).not.toContain(card.number);
    const preserved = await api
      .create({ type: 'card', data: card, id: '{{ data.number | alias_preserve_format: 6, 4 }}' })
      .expect(201);
    expect(preserved.body.id.slice(-4)).toBe(card.number.slice(-4));
    await api
      .create({ type: 'card', data: card, id: `customer-42-card-${card.number.slice(-4)}` })
      .expect(201);
  });
});
