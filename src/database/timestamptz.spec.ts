import { types } from 'pg';
import { parseTimestamptz, vaultTypes } from './timestamptz';

const pgParse = types.getTypeParser(types.builtins.TIMESTAMPTZ, 'text') as (text: string) => unknown;

/** Same value and same kind (a Date, or the Infinity pg gives infinity) as pg's own parser. */
function expectSame(text: string): void {
  const ours = parseTimestamptz(text);
  const theirs = pgParse(text);
  if (theirs instanceof Date) {
    expect(ours).toBeInstanceOf(Date);
    expect([text, (ours as Date).getTime()]).toEqual([text, theirs.getTime()]);
  } else {
    expect(ours).toEqual(theirs);
  }
}

describe('parseTimestamptz', () => {
  it('reads every fraction length as pg does, milliseconds truncated alike', () => {
    const pad = (n: number, width: number): string => String(n).padStart(width, '0');
    let seed = 7;
    const next = (m: number): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % m;
    for (let i = 0; i < 3000; i++) {
      const fraction = String(next(1_000_000))
        .padStart(6, '0')
        .slice(0, 1 + (i % 6))
        .replace(/0+$/, '');
      const text = `${1000 + next(9000)}-${pad(1 + next(12), 2)}-${pad(1 + next(28), 2)} ${pad(next(24), 2)}:${pad(next(60), 2)}:${pad(next(60), 2)}${fraction === '' ? '' : `.${fraction}`}+00`;
      expectSame(text);
    }
    for (const fraction of ['57', '29', '001', '999999', '000001', '5', '07']) {
      expectSame(`2026-12-07 10:10:00.${fraction}+00`);
    }
  });

  it.each([
    '2026-12-07 10:10:00+00',
    '2026-12-07 10:10:00.123456+05:30',
    '2026-12-07 10:10:00-03',
    '2026-12-07 10:10:00.5+00:00',
    '0099-01-01 00:00:00+00',
    '0999-06-30 12:00:00.25+00',
    '12026-01-01 00:00:00+00',
    '2000-01-01 00:00:00+00 BC',
    'infinity',
    '-infinity',
  ])('reads %s as pg does', (text) => expectSame(text));

  it('is the pool’s timestamptz parser, and only that', () => {
    expect(vaultTypes.getTypeParser(types.builtins.TIMESTAMPTZ, 'text')).toBe(parseTimestamptz);
    expect(vaultTypes.getTypeParser(types.builtins.TIMESTAMP, 'text')).toBe(
      types.getTypeParser(types.builtins.TIMESTAMP, 'text'),
    );
    expect(vaultTypes.getTypeParser(types.builtins.TIMESTAMPTZ, 'binary')).toBe(
      types.getTypeParser(types.builtins.TIMESTAMPTZ, 'binary'),
    );
  });
});
