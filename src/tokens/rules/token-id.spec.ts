import { idContainsData, validateTokenId } from './token-id';

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

describe('idContainsData', () => {
  const card = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' };

  it('finds a whole data value of 8 or more characters anywhere in the id', () => {
    expect(idContainsData('4242424242424242', card)).toBe(true);
    expect(idContainsData('card-4242424242424242-x', card)).toBe(true);
    expect(idContainsData('ssn-123-45-6789', '123-45-6789')).toBe(true);
    expect(idContainsData('acct-12345678901', { nested: [{ account: 12345678901 }] })).toBe(true);
  });

  it('allows ids sharing only parts or short values with the data', () => {
    expect(idContainsData('424242XXXXXX4242', card)).toBe(false);
    expect(idContainsData('card-2030-12-123', card)).toBe(false);
    expect(idContainsData('d290f1ee-6c54-4b01-90e6-d701748f0851', card)).toBe(false);
    expect(idContainsData('order-1', 'order-1')).toBe(false);
  });
});
