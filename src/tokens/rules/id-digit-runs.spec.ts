import { digitRuns, idSharesDigitRun } from './id-digit-runs';

describe('idSharesDigitRun', () => {
  const card = { number: '4539148803436467', expiration_month: 12, expiration_year: 2030 };

  it('reads digit runs across separators but not across letters', () => {
    expect(digitRuns('4-2-4-2 42.42')).toEqual(['42424242']);
    expect(digitRuns('424242XXXXXX4242')).toEqual(['424242', '4242']);
  });

  it('finds six or more card digits however they are separated', () => {
    expect(idSharesDigitRun('4-5-3-9-1-4-8-8-0-3-4-3-6-4-6-7', card)).toBe(true);
    expect(idSharesDigitRun('x_45391488_0343_6467', card)).toBe(true);
    expect(idSharesDigitRun('mid-880343', card)).toBe(true);
    expect(idSharesDigitRun('ssn-1-2-3-4-5-6', '123-45-6789')).toBe(true);
    expect(idSharesDigitRun('acct.567.890', { nested: [{ account: 12345678901 }] })).toBe(true);
    expect(idSharesDigitRun('acct.45678.9', { nested: [{ account: '12345678901' }] })).toBe(true);
  });

  it('lets an id show a card number’s BIN and last four, and shorter or unrelated runs', () => {
    expect(idSharesDigitRun('453914XXXXXX6467', card)).toBe(false);
    // The BIN and last four joined: the parts that occur in the number are the BIN and the last four.
    expect(idSharesDigitRun('4539146467', card)).toBe(false);
    // alias_preserve_format: 6, 4 with random middle digits, and alias_card (BIN and random digits).
    expect(idSharesDigitRun('4539149302816467', card)).toBe(false);
    expect(idSharesDigitRun('4539140738920016', card)).toBe(false);
    expect(idSharesDigitRun('card-88034', card)).toBe(false);
    expect(idSharesDigitRun('d290f1ee-6c54-4b01-90e6-d701748f0851', card)).toBe(false);
    expect(idSharesDigitRun('order-2030-12', card)).toBe(false);
  });

  it('counts a card run that reaches three middle digits from either end', () => {
    expect(idSharesDigitRun('453914880', card)).toBe(true);
    expect(idSharesDigitRun('3436467', card)).toBe(true);
    expect(idSharesDigitRun('45391488', card)).toBe(false);
  });
});
