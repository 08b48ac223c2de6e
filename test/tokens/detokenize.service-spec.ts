import { Principal } from '../../src/access/principal';
import { auditEvent } from '../../src/audit/audit-event';
import { statusOf } from '../support/problems';
import { rule } from '../support/token-factory';
import { openTokenServices, TokenServices } from '../support/token-services';

/** The detokenization service as reactors and the proxy call it, driven with real applications. */
describe('detokenization', () => {
  let s: TokenServices;
  let tenantId: string;
  let user: Principal;
  let cardId: string;
  let textId: string;

  const detokenize = (p: Principal, value: unknown): Promise<unknown> => s.detokenize.detokenize(p, value);
  const auditRows = (): Promise<{ operation: string; message: string }[]> =>
    s.db.dataSource.query('SELECT * FROM audit_records WHERE tenant_id = $1 ORDER BY created_at, id', [
      tenantId,
    ]);

  beforeAll(async () => {
    s = await openTokenServices();
    tenantId = await s.newTenant();
    user = s.principal(tenantId, [], ['token:create', 'token:use']);
    const card = await s.tokens.create(user, {
      type: 'card',
      data: { number: '4242424242424242', expiration_month: 4, expiration_year: 2031 },
      metadata: { k: 'meta' },
    });
    cardId = card.id;
    textId = (await s.tokens.create(user, { type: 'token', data: 'Jane' })).id;
  });
  afterAll(() => s.close());

  it('substitutes typed values, parts, whole tokens and mixed text', async () => {
    const out = await detokenize(user, {
      card: `{{ ${cardId} }}`,
      number: `{{ ${cardId} | json: '$.number' }}`,
      month: `{{ ${cardId} | json: '$.expiration_month' }}`,
      meta: `{{ token: ${cardId} | json: '$.metadata.k' }}`,
      greeting: `Hello {{ ${textId} }}, card ending {{ ${cardId} | json: '$.number' | last4 }}`,
      untouched: 42,
      list: [`{{ ${textId} }}`],
    });
    expect(out).toEqual({
      card: { number: '4242424242424242', expiration_month: 4, expiration_year: 2031 },
      number: '4242424242424242',
      month: 4,
      meta: 'meta',
      greeting: 'Hello Jane, card ending 4242',
      untouched: 42,
      list: ['Jane'],
    });
  });

  it('shows the mask in a whole token and as the data of a masked token, never the number', async () => {
    const masked = /^[^0-9]*4242$|^[0-9X*]{0,12}4242$/;
    const revealed = (await detokenize(user, {
      mask: `{{ token: ${cardId} | json: '$.mask.number' }}`,
      whole: `{{ token: ${cardId} }}`,
      data: `{{ ${cardId} | json: '$.number' }}`,
    })) as { mask: string; whole: { mask: unknown; data: unknown }; data: string };
    expect(revealed.mask).toMatch(masked);
    expect(revealed.mask).not.toContain('424242424242');
    expect(revealed.whole.mask).toMatchObject({ number: revealed.mask });
    expect(revealed.data).toBe('4242424242424242');
    const maskOnly = s.principal(tenantId, [rule('/', 'mask', ['token:use'])], []);
    const seen = (await detokenize(maskOnly, { card: `{{ ${cardId} }}` })) as { card: { number: string } };
    expect(seen.card.number).toBe(revealed.mask);
    const text = await s.detokenize.detokenizeTextRecorded(maskOnly, `n={{ ${cardId} | json: '$.number' }}`, {
      events: [],
      written: false,
    });
    expect(text).toBe(`n=${revealed.mask}`);
  });

  it('gives a redacting rule nothing of the data: null for a data reference, no data in a whole token', async () => {
    const redacted = s.principal(tenantId, [rule('/', 'redact', ['token:use'])], []);
    const out = (await detokenize(redacted, {
      data: `{{ ${cardId} }}`,
      part: `{{ ${cardId} | json: '$.number' }}`,
      whole: `{{ token: ${cardId} }}`,
      text: `n={{ ${textId} }}`,
    })) as { data: unknown; part: unknown; whole: Record<string, unknown>; text: string };
    expect(out.data).toBeNull();
    expect(out.part).toBeNull();
    expect(out.whole.id).toBe(cardId);
    expect(out.whole.data).toBeUndefined();
    expect(JSON.stringify(out)).not.toContain('4242424242424242');
    expect(out.text).not.toContain('Jane');
  });

  it('answers 400 for an unknown id and for more than 100 distinct tokens', async () => {
    expect(await statusOf(detokenize(user, { a: '{{ no-such-token }}' }))).toBe(400);
    const many = Array.from({ length: 101 }, (_, i) => `{{ id-${i} }}`);
    expect(await statusOf(detokenize(user, many))).toBe(400);
  });

  it("answers 403 without token:use on the token container, and 400 for another tenant's token", async () => {
    const p = s.principal(tenantId, [rule('/general/', 'reveal', ['token:use'])], []);
    expect(await detokenize(p, `{{ ${textId} }}`)).toBe('Jane');
    expect(await statusOf(detokenize(p, `{{ ${cardId} }}`))).toBe(403);
    const stranger = s.principal(await s.newTenant(), [], ['token:use']);
    expect(await statusOf(detokenize(stranger, `{{ ${cardId} }}`))).toBe(400);
  });

  it("detokenizes text bodies, and writes the record of the tokens used with the caller's own", async () => {
    const before = (await auditRows()).length;
    const own = auditEvent(user, 'proxy', null, 'proxy', 'Request forwarded (POST)');
    const records = { events: [own], written: false };
    const value = await s.detokenize.detokenizeTextRecorded(
      user,
      `name={{ ${textId} }}&card={{ ${cardId} | json: '$.number' }}`,
      records,
    );
    expect(value).toBe('name=Jane&card=4242424242424242');
    expect(records.written).toBe(true);
    const written = (await auditRows()).slice(before);
    expect(written.map((r) => [r.operation, r.message]).sort()).toEqual([
      ['detokenize', `Tokens used: ${textId} (reveal), ${cardId} (reveal)`],
      ['proxy', 'Request forwarded (POST)'],
    ]);
    const none = { events: [own], written: false };
    const detokenizer = s.detokenize;
    expect(await detokenizer.detokenizeTextRecorded(user, 'no expressions here', none)).toBe(
      'no expressions here',
    );
    expect(none.written).toBe(true);
    expect((await auditRows()).slice(before + 2).map((r) => r.operation)).toEqual(['proxy']);
  });
});
