import { validateTokenId } from './token-id';

const LENGTH = 'must be 3 to 400 characters long';
const FORBIDDEN = 'must not contain any of # / \\ + ? [ ] | & = % < > { } ^';
const SPACE = 'must not contain whitespace or control characters';

describe('validateTokenId', () => {
  it.each([
    ['abc'],
    ['a'.repeat(400)],
    ['😀'.repeat(400)],
    ['order_123-ABC.v2'],
    ['d290f1ee-6c54-4b01-90e6-d701748f0851'],
    ['ünïcödé'],
    ['a:b;c,d!e@f$g*h(i)j~k`l\'m"n'],
  ])('accepts %p', (id) => {
    expect(validateTokenId(id)).toBeNull();
  });

  it.each([[''], ['ab'], ['😀😀'], ['a'.repeat(401)], ['😀'.repeat(401)]])('rejects length of %p', (id) => {
    expect(validateTokenId(id)).toBe(LENGTH);
  });

  it.each('#/\\+?[]|&=%<>{}^'.split(''))('rejects %p', (char) => {
    expect(validateTokenId(`abc${char}def`)).toBe(FORBIDDEN);
  });

  it('rejects alias expressions as final ids', () => {
    expect(validateTokenId('{{ data | alias_card }}')).toBe(FORBIDDEN);
  });

  it.each([
    ['ab c'],
    ['abc\t'],
    ['\nabc'],
    ['ab\u00a0c'],
    ['ab\u2028c'],
    ['ab\u0000c'],
    ['ab\u007fc'],
    ['ab\u0085c'],
  ])('rejects whitespace or control in %p', (id) => {
    expect(validateTokenId(id)).toBe(SPACE);
  });

  it('rejects unpaired surrogates', () => {
    expect(validateTokenId('abc\ud800')).toBe('must be valid Unicode text');
    expect(validateTokenId('abc\udc00def')).toBe('must be valid Unicode text');
  });

  it('rejects a non-string at runtime', () => {
    expect(validateTokenId(12345 as unknown as string)).toBe('must be a string');
  });

  it('never echoes the id', () => {
    for (const id of ['secret-4242#', 'x', 'secret value', 'secret\u0000id']) {
      expect(validateTokenId(id)).not.toContain('secret');
    }
  });
});
