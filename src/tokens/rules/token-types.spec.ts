import { FieldErrors } from '../../common/field-errors';
import {
  abaRoutingValid,
  defaultsFor,
  isTokenType,
  luhnValid,
  TOKEN_TYPES,
  validateTokenData,
} from './token-types';

/** Appends the Luhn check digit, so a length test fails on length rather than on the checksum. */
function withCheckDigit(body: string): string {
  for (let d = 0; d <= 9; d++) {
    if (luhnValid(body + d)) {
      return body + d;
    }
  }
  throw new Error('unreachable');
}

/** Every message must be free of every supplied value (3+ chars: "12" is legitimately part of "1 to 12"). */
function expectNoValueLeak(errors: FieldErrors, data: unknown): void {
  const values: string[] = [];
  const collect = (v: unknown): void => {
    if (typeof v === 'string' || typeof v === 'number') {
      values.push(String(v));
    } else if (v && typeof v === 'object') {
      Object.values(v).forEach(collect);
    }
  };
  collect(data);
  for (const message of Object.values(errors).flat()) {
    for (const value of values.filter((x) => x.length >= 3)) {
      expect(message).not.toContain(value);
    }
  }
}

function check(type: 'card' | 'bank' | 'token', data: unknown): FieldErrors {
  const errors = validateTokenData(type, data);
  expectNoValueLeak(errors, data);
  return errors;
}

describe('token types', () => {
  it('lists the types and recognises them', () => {
    expect(TOKEN_TYPES).toEqual(['token', 'card', 'bank']);
    expect(isTokenType('card')).toBe(true);
    expect(isTokenType('Card')).toBe(false);
    expect(isTokenType(1)).toBe(false);
  });

  it('has the DESIGN §7 defaults', () => {
    expect(defaultsFor('token')).toEqual({
      containers: ['/general/high/'],
      fingerprintExpression: '{{ data | stringify }}',
      mask: null,
    });
    expect(defaultsFor('card')).toEqual({
      containers: ['/pci/high/'],
      fingerprintExpression: '{{ data.number }}',
      mask: {
        number: '{{ data.number | reveal_last: 4 }}',
        expiration_month: '{{ data.expiration_month }}',
        expiration_year: '{{ data.expiration_year }}',
      },
    });
    expect(defaultsFor('bank')).toEqual({
      containers: ['/bank/high/'],
      fingerprintExpression: '{{ data.account_number }}|{{ data.routing_number }}',
      mask: {
        routing_number: '{{ data.routing_number }}',
        account_number: '{{ data.account_number | reveal_last: 4 }}',
      },
    });
  });

  it('returns fresh defaults each call', () => {
    defaultsFor('card').containers.push('/x/');
    expect(defaultsFor('card').containers).toEqual(['/pci/high/']);
  });
});

describe('luhnValid / abaRoutingValid', () => {
  it.each(['4242424242424242', '4111111111111111', '4222222222222', '79927398713', '0'])(
    'luhn ok %s',
    (n) => {
      expect(luhnValid(n)).toBe(true);
    },
  );
  it.each(['4242424242424241', '79927398710', '', '4242 4242 4242 4242', '١٢٣'])('luhn bad %s', (n) => {
    expect(luhnValid(n)).toBe(false);
  });
  it.each(['021000021', '011000015', '111000025'])('aba ok %s', (n) => expect(abaRoutingValid(n)).toBe(true));
  it.each(['021000022', '02100002', '0210000210', '02100002a', ''])('aba bad %s', (n) => {
    expect(abaRoutingValid(n)).toBe(false);
  });
});

describe('validateTokenData: token', () => {
  it.each([['a string'], [0], [false], [''], [[]], [{}], [{ nested: [1, { a: null }] }]])(
    'accepts %p',
    (data) => {
      expect(validateTokenData('token', data)).toEqual({});
    },
  );
  it.each([[null], [undefined]])('requires data (%p)', (data) => {
    expect(validateTokenData('token', data)).toEqual({ data: ['is required'] });
  });
  it('uses the given prefix', () => {
    expect(validateTokenData('token', null, 'tokens[2].data')).toEqual({ 'tokens[2].data': ['is required'] });
  });
});

describe('validateTokenData: card', () => {
  const valid = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' };

  it('accepts a full card, a number-only card and 13 and 19 digit numbers', () => {
    expect(check('card', valid)).toEqual({});
    expect(check('card', { number: '4111111111111111' })).toEqual({});
    expect(check('card', { number: '4222222222222' })).toEqual({});
    expect(check('card', { number: withCheckDigit('622126000000000000') })).toEqual({});
    expect(check('card', { ...valid, expiration_month: 1, cvc: '1234' })).toEqual({});
  });

  it.each([
    ['bad Luhn', { number: '4242424242424241' }, 'must pass the Luhn check'],
    ['12 digits', { number: withCheckDigit('42424242424') }, 'must be 13 to 19 digits without separators'],
    [
      '20 digits',
      { number: withCheckDigit('4242424242424242424') },
      'must be 13 to 19 digits without separators',
    ],
    ['spaces', { number: '4242 4242 4242 4242' }, 'must be 13 to 19 digits without separators'],
    ['dashes', { number: '4242-4242-4242-4242' }, 'must be 13 to 19 digits without separators'],
    ['letters', { number: '42424242424242a2' }, 'must be 13 to 19 digits without separators'],
    ['non-ASCII digits', { number: '٤٢٤٢٤٢٤٢٤٢٤٢٤٢٤٢' }, 'must be 13 to 19 digits without separators'],
    ['a number type', { number: 4242424242424242 }, 'must be a string'],
    ['missing', {}, 'is required'],
    ['null', { number: null }, 'is required'],
  ])('rejects number: %s', (_label, data, message) => {
    expect(check('card', data)).toEqual({ 'data.number': [message] });
  });

  it.each([[0], [13], [-1], [1.5], ['12'], [null], [true]])('rejects expiration_month %p', (month) => {
    const data = { ...valid, expiration_month: month };
    expect(check('card', data)).toEqual({ 'data.expiration_month': ['must be an integer from 1 to 12'] });
  });

  it.each([[30], [999], [10000], [2030.5], ['2030'], [null]])('rejects expiration_year %p', (year) => {
    const data = { ...valid, expiration_year: year };
    expect(check('card', data)).toEqual({ 'data.expiration_year': ['must be a four-digit integer'] });
  });

  it.each([['12'], ['12345'], ['12a'], [123], [null]])('rejects cvc %p', (cvc) => {
    expect(check('card', { ...valid, cvc })).toEqual({ 'data.cvc': ['must be a string of 3 or 4 digits'] });
  });

  it('rejects unknown fields and reports every failure at once', () => {
    const data = { number: '4242424242424241', cvc: '1', pin: '9876', holder: 'Jane Roe' };
    expect(check('card', data)).toEqual({
      'data.number': ['must pass the Luhn check'],
      'data.cvc': ['must be a string of 3 or 4 digits'],
      'data.pin': ['is not a card field'],
      'data.holder': ['is not a card field'],
    });
  });

  it('does not read inherited properties as fields', () => {
    expect(check('card', Object.create({ number: '4242424242424242' }))).toEqual({
      'data.number': ['is required'],
    });
  });

  it.each([['4242424242424242'], [[valid]], [42]])('requires an object (%p)', (data) => {
    expect(check('card', data)).toEqual({ data: ['must be an object'] });
  });

  it('requires data and uses the prefix', () => {
    expect(check('card', null)).toEqual({ data: ['is required'] });
    expect(validateTokenData('card', { number: '1' }, 'card.data')).toEqual({
      'card.data.number': ['must be 13 to 19 digits without separators'],
    });
  });
});

describe('validateTokenData: bank', () => {
  const valid = { routing_number: '021000021', account_number: '1234567890' };

  it('accepts valid banks, including a 17-digit and a 1-digit account', () => {
    expect(check('bank', valid)).toEqual({});
    expect(check('bank', { ...valid, account_number: '12345678901234567' })).toEqual({});
    expect(check('bank', { ...valid, account_number: '7' })).toEqual({});
  });

  it.each([
    ['bad checksum', '021000022', 'must have a valid ABA routing checksum'],
    ['8 digits', '02100002', 'must be 9 digits'],
    ['10 digits', '0210000210', 'must be 9 digits'],
    ['a dash', '0210-0021', 'must be 9 digits'],
    ['a number type', 21000021, 'must be a string'],
    ['null', null, 'is required'],
  ])('rejects routing_number: %s', (_label, routing, message) => {
    expect(check('bank', { ...valid, routing_number: routing })).toEqual({
      'data.routing_number': [message],
    });
  });

  it.each([
    ['18 digits', '123456789012345678', 'must be 1 to 17 digits'],
    ['empty', '', 'must be 1 to 17 digits'],
    ['letters', '12345x', 'must be 1 to 17 digits'],
    ['a number type', 1234567890, 'must be a string'],
  ])('rejects account_number: %s', (_label, account, message) => {
    expect(check('bank', { ...valid, account_number: account })).toEqual({
      'data.account_number': [message],
    });
  });

  it('requires both fields and rejects unknown ones', () => {
    expect(check('bank', { iban: 'DE89370400440532013000' })).toEqual({
      'data.routing_number': ['is required'],
      'data.account_number': ['is required'],
      'data.iban': ['is not a bank field'],
    });
  });

  it('requires an object', () => {
    expect(check('bank', ['021000021'])).toEqual({ data: ['must be an object'] });
    expect(check('bank', undefined)).toEqual({ data: ['is required'] });
  });
});
