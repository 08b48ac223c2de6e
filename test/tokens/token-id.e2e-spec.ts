import { TestContext, TestTenant } from '../support/test-app';
import { bankData, cardData, countTokens, tokenApp, TokensApi } from '../support/token-factory';
import { MAX_SHARED_DIGITS } from '../../src/tokens/rules/id-digit-runs';

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

  it('refuses an alias spelling out card digits with separators, echoing nothing', async () => {
    const card = cardData();
    const digitsMessage = `must not contain more than ${MAX_SHARED_DIGITS} consecutive digits of the token data`;
    const before = await countTokens(ctx);
    for (const id of [
      '{{ data.number | split: "" | join: "-" }}',
      'card_{{ data.number | slice: 3, 8 | split: "" | join: "." }}',
      '{{ data.number | slice: 0, 8 }}-{{ data.number | slice: 8, 8 }}',
      '{{ data.expiration_year }}{{ data.number | slice: 6, 6 | split: "" | join: "_" }}',
    ]) {
      const res = await api.create({ type: 'card', data: card, id }).expect(400);
      expect(res.body.errors).toEqual({ id: [digitsMessage] });
      expect(res.text).not.toContain(card.number.slice(6, 12));
    }
    // The BIN and last four may show, as in any card display.
    await api
      .create({ type: 'card', data: card, id: `{{ data.number | slice: 0, 6 }}-x-{{ data.number | last4 }}` })
      .expect(201);
    expect(await countTokens(ctx)).toBe(before + 1);
  });

  it('keeps token ids out of the request logs of GET, PATCH and DELETE /tokens/{id}', async () => {
    const full = await tokenApp(ctx, tenant);
    const alias = await full.api
      .create({ type: 'card', data: cardData(), id: '{{ data.number | alias_preserve_format: 6, 4 }}' })
      .expect(201);
    const id = alias.body.id as string;
    const logged = ctx.logs.length;
    await full.api.get(id).expect(200);
    await full.api.patch(id, { metadata: { a: 'b' } }).expect(200);
    await ctx.http.get(`//TOKENS/${id}/`).set('BT-API-KEY', full.key);
    await full.api.delete(id).expect(204);
    const logs = ctx.logs.slice(logged).join('\n');
    expect(logs).not.toContain(id);
    expect(logs).not.toContain(id.slice(6, 12));
    expect(logs.match(/"path":"\/tokens\/\[id\]"/g)).toHaveLength(3);
    expect(logs).toContain('"path":"//TOKENS/[id]"');
    await full.api.search({ query: 'metadata.a:b' });
    expect(ctx.logs.slice(logged).join('\n')).toContain('"path":"/tokens/search"');
  });
});
