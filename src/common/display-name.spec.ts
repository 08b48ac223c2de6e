import { plainName } from './display-name';

describe('plainName', () => {
  it.each([
    ['Acme\r\nSee https://evil.example', 'Acme  See https://evil.example'],
    ['Pay\u2028ments\u2029', 'Pay ments'],
    ['\u202eelpmaxe.live\u202c', 'elpmaxe.live'],
    ['zero\u200bwidth\u00ad', 'zerowidth'],
    ['tab\there\u0000\u007f\u0085', 'tab here'],
    ['  Checkout backend  ', 'Checkout backend'],
    ['Café ☕ 東京', 'Café ☕ 東京'],
  ])('keeps %j as %j', (input, output) => {
    expect(plainName(input)).toBe(output);
  });

  it('leaves nothing of a name made only of control characters', () => {
    expect(plainName('\r\n\u200b\u0007')).toBe('');
  });
});
