import { parseExpiresAt } from './expires-at';

const NOW = new Date('2025-06-15T12:00:00Z');
const FORMAT = { error: 'must be an ISO 8601 date-time or a M/D/YYYY date' };
const PAST = { error: 'must be in the future' };

function iso(value: unknown): string {
  const result = parseExpiresAt(value, NOW);
  if (!('date' in result)) {
    throw new Error(`expected a date, got ${result.error}`);
  }
  return result.date.toISOString();
}

describe('parseExpiresAt', () => {
  it.each([
    ['2030-01-02T03:04:05+02:00', '2030-01-02T01:04:05.000Z'],
    ['2030-01-02T03:04:05-05:30', '2030-01-02T08:34:05.000Z'],
    ['2030-01-02T03:04:05+0200', '2030-01-02T01:04:05.000Z'],
    ['2030-01-02T03:04:05Z', '2030-01-02T03:04:05.000Z'],
    ['2030-01-02T03:04:05.123Z', '2030-01-02T03:04:05.123Z'],
    ['2030-01-02T03:04:05.5+01:00', '2030-01-02T02:04:05.500Z'],
    ['2030-01-02T03:04:05.123456789Z', '2030-01-02T03:04:05.123Z'],
    ['2030-01-02T03:04Z', '2030-01-02T03:04:00.000Z'],
    ['2030-01-02T00:30:00+01:00', '2030-01-01T23:30:00.000Z'],
  ])('reads date-time with offset %s', (input, expected) => {
    expect(iso(input)).toBe(expected);
  });

  it.each([
    ['2030-01-02T03:04:05', '2030-01-02T03:04:05.000Z'],
    ['2030-01-02T03:04', '2030-01-02T03:04:00.000Z'],
  ])('reads a date-time without offset as UTC: %s', (input, expected) => {
    expect(iso(input)).toBe(expected);
  });

  it.each([
    ['1/2/2030', '2030-01-02T00:00:00.000Z'],
    ['01/02/2030', '2030-01-02T00:00:00.000Z'],
    ['12/31/2030', '2030-12-31T00:00:00.000Z'],
    ['2/29/2028', '2028-02-29T00:00:00.000Z'],
    ['2/29/2400', '2400-02-29T00:00:00.000Z'],
  ])('reads short date %s as midnight UTC', (input, expected) => {
    expect(iso(input)).toBe(expected);
  });

  it.each([
    ['2/30/2030'],
    ['2/29/2029'],
    ['2/29/2100'],
    ['4/31/2030'],
    ['13/1/2030'],
    ['0/10/2030'],
    ['1/0/2030'],
    ['2030-13-01T00:00:00Z'],
    ['2030-02-30T00:00:00Z'],
    ['2030-01-00T00:00:00Z'],
    ['2030-01-02T24:00:00Z'],
    ['2030-01-02T23:60:00Z'],
    ['2030-01-02T23:59:60Z'],
    ['2030-01-02T03:04:05+24:00'],
    ['2030-01-02T03:04:05+01:60'],
  ])('rejects impossible date or time %s', (input) => {
    expect(parseExpiresAt(input, NOW)).toEqual(FORMAT);
  });

  it.each([
    [''],
    ['tomorrow'],
    ['2030-01-02'],
    ['2030-01-02 03:04:05Z'],
    ['2030-01-02t03:04:05z'],
    ['2030-1-2T03:04:05Z'],
    ['2030-01-02T03:04:05+02'],
    ['2030-01-02T03:04:05 +02:00'],
    [' 2030-01-02T03:04:05Z'],
    ['2030-01-02T03:04:05Z\n'],
    ['1/2/30'],
    ['001/2/2030'],
    ['1-2-2030'],
    ['2030/01/02'],
    ['Wed, 02 Jan 2030 03:04:05 GMT'],
    [1893553445000],
    [null],
    [undefined],
    [{}],
  ])('rejects unsupported form %p', (input) => {
    expect(parseExpiresAt(input, NOW)).toEqual(FORMAT);
  });

  it('requires a time strictly after now', () => {
    expect(parseExpiresAt('2025-06-15T12:00:00Z', NOW)).toEqual(PAST);
    expect(parseExpiresAt('2025-06-15T14:00:00+02:00', NOW)).toEqual(PAST);
    expect(parseExpiresAt('2025-06-15T12:00:00.001Z', NOW)).toEqual({
      date: new Date('2025-06-15T12:00:00.001Z'),
    });
    expect(parseExpiresAt('6/15/2025', NOW)).toEqual(PAST);
    expect(parseExpiresAt('6/16/2025', NOW)).toEqual({ date: new Date('2025-06-16T00:00:00Z') });
    expect(parseExpiresAt('1/1/2000', NOW)).toEqual(PAST);
  });

  it('keeps years below 100 as written (not 19xx)', () => {
    expect(parseExpiresAt('0099-01-01T00:00:00Z', new Date(Date.UTC(-1000, 0)))).toEqual({
      date: new Date('0099-01-01T00:00:00Z'),
    });
  });
});
