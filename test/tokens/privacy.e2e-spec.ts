import { TestContext, TestTenant } from '../support/test-app';
import { ALL_TOKEN_PERMISSIONS, cardData, rule, tokenApp, TokensApi } from '../support/token-factory';

/**
 * Issue 23 item 6: the SDKs' `privacy` placement maps onto a container and the mask decision
 * (src/tokens/rules/privacy.ts), on create, on update and in /tokenize, and is refused by name when wrong.
 */
describe('token privacy (classification, impact level, restriction policy)', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let writer: { id: string; key: string; api: TokensApi };
  /** Sees masks, never data: what restriction_policy decides. */
  let masked: { id: string; key: string; api: TokensApi };

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    writer = await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
    masked = await tokenApp(ctx, tenant, [rule('/', 'mask', ['token:read'])]);
  });
  afterAll(() => ctx.close());

  it('places a token in /<classification>/<impact_level>/, the rest from the type default', async () => {
    const card = await writer.api.create({
      type: 'card',
      data: cardData(),
      privacy: { impact_level: 'moderate' },
    });
    expect([card.status, card.body.containers]).toEqual([201, ['/pci/moderate/']]);
    const both = await writer.api.create({
      type: 'token',
      data: 'x',
      privacy: { classification: 'PII', impact_level: 'low', restriction_policy: 'mask' },
    });
    expect([both.status, both.body.containers]).toEqual([201, ['/pii/low/']]);
    const none = await writer.api.create({ type: 'token', data: 'x', privacy: null });
    expect(none.body.containers).toEqual(['/general/high/']);
  });

  it('redact removes the mask, so a reader whose rule masks gets no data; mask brings the default back', async () => {
    const data = cardData();
    const card = await writer.api.create({ type: 'card', data, privacy: { restriction_policy: 'redact' } });
    expect(card.status).toBe(201);
    expect(card.body.mask).toBeUndefined();
    const redacted = await masked.api.get(card.body.id as string);
    expect(redacted.status).toBe(200);
    expect(redacted.body.data).toBeUndefined();
    expect(JSON.stringify(redacted.body)).not.toContain(data.number.slice(-4));

    const patched = await writer.api.patch(card.body.id as string, {
      privacy: { restriction_policy: 'mask' },
    });
    expect(patched.status).toBe(200);
    const shown = await masked.api.get(card.body.id as string);
    expect(shown.body.data).toMatchObject({
      number: `${'X'.repeat(data.number.length - 4)}${data.number.slice(-4)}`,
    });
  });

  it('changes the impact level on update, keeping the classification', async () => {
    const id = (await writer.api.create({ type: 'card', data: cardData() })).body.id as string;
    const res = await writer.api.patch(id, { privacy: { impact_level: 'low' } });
    expect([res.status, res.body.containers]).toEqual([200, ['/pci/low/']]);
    const custom = await writer.api.create({ type: 'token', data: 'x', containers: ['/custom/', '/b/'] });
    const leveled = await writer.api.patch(custom.body.id as string, { privacy: { impact_level: 'low' } });
    expect(leveled.body.containers).toEqual(['/custom/low/', '/b/']);
  });

  it('accepts privacy in /tokenize definitions', async () => {
    const res = await writer.api.tokenize({
      card: { type: 'card', data: cardData(), privacy: { impact_level: 'low' } },
    });
    expect(res.status).toBe(200);
    expect(res.body.card.containers).toEqual(['/pci/low/']);
  });

  it('refuses bad privacy by name, and creates or changes nothing', async () => {
    const refused = async (body: Record<string, unknown>, field: string, message: RegExp): Promise<void> => {
      const res = await writer.api.create({ type: 'card', data: cardData(), ...body });
      expect(res.status).toBe(400);
      expect(res.body.errors[field]).toEqual([expect.stringMatching(message)]);
    };
    await refused({ privacy: { impact_level: 'extreme' } }, 'privacy.impact_level', /low, moderate, high/);
    await refused(
      { privacy: { classification: 'secret' } },
      'privacy.classification',
      /general, bank, pci, pii/,
    );
    await refused({ privacy: { restriction_policy: 'hide' } }, 'privacy.restriction_policy', /mask, redact/);
    await refused({ privacy: { colour: 'red' } }, 'privacy.colour', /not a privacy field/);
    await refused({ privacy: 'pci' }, 'privacy', /must be an object/);
    await refused(
      { privacy: { classification: 'pci' }, containers: ['/pci/high/'] },
      'privacy',
      /not both|one or the other/,
    );
    await refused(
      { privacy: { restriction_policy: 'redact' }, mask: { number: '{{ data.number | last4 }}' } },
      'privacy.restriction_policy',
      /cannot be sent with a mask/,
    );
    const id = (await writer.api.create({ type: 'card', data: cardData() })).body.id as string;
    const changed = await writer.api.patch(id, {
      privacy: { classification: 'general', impact_level: 'low' },
    });
    expect(changed.status).toBe(400);
    expect(changed.body.errors['privacy.classification']).toEqual(['cannot be changed']);
    expect((await writer.api.get(id)).body.containers).toEqual(['/pci/high/']);
  });
});
