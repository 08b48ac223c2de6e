import { ExpressionEngine } from '../expressions';
import { maskShortcut, NO_SHORTCUT } from './mask-shortcuts';
import { defaultsFor } from './rules/token-types';

const VALUES: unknown[] = [
  '4242424242424242',
  '378282246310005',
  '1234',
  '123',
  '',
  '0000',
  '12-34',
  '4242 4242',
  ' 4242',
  '١٢٣٤٥٦',
  '４２４２４２',
  'abcdef',
  'ünïcødé 😀',
  '{{ data }}',
  'line\nbreak',
  4242424242424242,
  12,
  0,
  -0,
  -1,
  1.5,
  1e21,
  2 ** 53 + 2,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  false,
  null,
  undefined,
  [1, 2],
  { a: 1 },
];

/** Card and bank data with one field set to each value, or left out; and data that is not an object. */
function dataSets(fields: string[]): unknown[] {
  const base = Object.fromEntries(fields.map((f) => [f, f === 'expiration_month' ? 12 : '4111111111111111']));
  const sets: unknown[] = [base, {}, null, 'text', 7, [base]];
  for (const f of fields) {
    for (const value of VALUES) {
      sets.push({ ...base, [f]: value });
    }
    const { [f]: _, ...without } = base;
    sets.push(without);
  }
  return sets;
}

/** The default mask in its own key order and in jsonb's (shorter keys first), as a stored row has it. */
function masksOf(type: 'card' | 'bank'): Record<string, unknown>[] {
  const mask = defaultsFor(type).mask as Record<string, string>;
  const stored = Object.fromEntries(
    Object.entries(mask).sort(([a], [b]) => a.length - b.length || (a < b ? -1 : 1)),
  );
  return [mask, stored];
}

describe('maskShortcut', () => {
  const engine = new ExpressionEngine();
  const render = (mask: unknown, data: unknown): string | undefined => {
    try {
      return JSON.stringify(engine.renderDeep(mask, { data }));
    } catch {
      return JSON.stringify(null);
    }
  };

  it.each([
    ['card', ['number', 'expiration_month', 'expiration_year']],
    ['bank', ['routing_number', 'account_number']],
  ] as const)('gives what the engine renders of the default %s mask, byte for byte', (type, fields) => {
    let taken = 0;
    for (const mask of masksOf(type)) {
      for (const data of dataSets([...fields])) {
        const shortcut = maskShortcut(mask, data);
        if (shortcut !== NO_SHORTCUT) {
          taken += 1;
          expect([mask, data, JSON.stringify(shortcut)]).toEqual([mask, data, render(mask, data)]);
          expect(shortcut).toEqual(engine.renderDeep(mask, { data }));
        }
      }
    }
    expect(taken).toBeGreaterThan(20);
  });

  it('takes the shortcut for valid card and bank data', () => {
    const card = { number: '4242424242424242', expiration_month: 4, expiration_year: 2031 };
    expect(maskShortcut(defaultsFor('card').mask, card)).toEqual({
      number: 'XXXXXXXXXXXX4242',
      expiration_month: 4,
      expiration_year: 2031,
    });
    const bank = { routing_number: '021000021', account_number: '000123456789' };
    expect(maskShortcut(defaultsFor('bank').mask, bank)).toEqual({
      routing_number: '021000021',
      account_number: 'XXXXXXXX6789',
    });
  });

  it('leaves every other mask to the engine', () => {
    const card = { number: '4242424242424242', expiration_month: 4 };
    for (const mask of [
      null,
      '{{ data.number | reveal_last: 4 }}',
      ['{{ data.number | reveal_last: 4 }}'],
      {},
      { number: '{{ data.number | reveal_last: 2 }}' },
      { number: '{{ data.number | reveal_last: 4 }}', brand: 'visa' },
      { number: '{{ data.number | reveal_last: 4 }}', nested: { m: '{{ data.expiration_month }}' } },
      { number: '{{data.number | reveal_last: 4}}' },
    ]) {
      expect(maskShortcut(mask, card)).toBe(NO_SHORTCUT);
    }
  });
});
