import { jsonErrorPosition } from './json-error-position';

describe('jsonErrorPosition', () => {
  it('is null for valid JSON of every kind', () => {
    for (const text of [
      '{}',
      '[]',
      '"x"',
      '12.5e-3',
      'true',
      'null',
      ' {"a": [1, {"b": "\\u00e9\\n"}], "c": -0} ',
    ]) {
      expect(jsonErrorPosition(text)).toBeNull();
    }
    expect(jsonErrorPosition('['.repeat(5000) + ']'.repeat(5000))).toBeNull();
  });

  it.each([
    ['{"a": abc}', 6],
    ['{"a": 1,}', 8],
    ['{"a" 1}', 5],
    ['[1 2]', 3],
    ['{"a": "x', 8],
    ['{"number":"4111111111111111"', 28],
    ['', 0],
    ['{} x', 3],
    ['"\\q"', 2],
    ["{'a': 1}", 1],
  ])('finds where %s breaks', (text, position) => {
    expect(jsonErrorPosition(text)).toBe(position);
  });

  it('does not overflow on deep nesting', () => {
    expect(jsonErrorPosition('['.repeat(200_000))).toBe(10_000);
  });
});
