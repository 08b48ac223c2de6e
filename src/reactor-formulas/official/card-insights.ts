/** Official formula: brand, BIN, last four, Luhn check and expiry of a card, without revealing the number. */
export const CARD_INSIGHTS = {
  id: '7d1c3b1e-5a0f-4c55-9a43-0b8f4c1f0a01',
  name: 'Card Insights',
  description:
    'Brand, BIN, last four digits, Luhn validity and expiry of a card token, so your systems can route and ' +
    'validate a payment without seeing the number. Pass the card token as `card`: {"card": "{{ <card token id> }}"}.',
  configuration: [],
  request_parameters: [
    { name: 'card.number', description: 'Card number', type: 'string', optional: false },
    { name: 'card.expiration_month', description: 'Expiration month', type: 'number', optional: true },
    {
      name: 'card.expiration_year',
      description: 'Expiration year (4 digits)',
      type: 'number',
      optional: true,
    },
  ],
  code: `const { BadRequestError } = require('@basis-theory/basis-theory-reactor-formulas-sdk-js');

const BRANDS = [
  ['american-express', /^3[47]/],
  ['diners-club', /^3(0[0-5]|[68])/],
  ['jcb', /^35(2[89]|[3-8])/],
  ['visa', /^4/],
  ['mastercard', /^(5[1-5]|222[1-9]|22[3-9]|2[3-6]|27[01]|2720)/],
  ['discover', /^(6011|65|64[4-9])/],
  ['unionpay', /^62/],
];

function luhn(number) {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

module.exports = async function (req) {
  const number = String(req.args.card.number).replace(/[\\s-]/g, '');
  if (!/^\\d{12,19}$/.test(number)) {
    throw new BadRequestError({ 'card.number': ['must be 12 to 19 digits'] });
  }
  const brand = (BRANDS.find(([, pattern]) => pattern.test(number)) || ['unknown'])[0];
  const month = req.args.card.expiration_month;
  const year = req.args.card.expiration_year;
  let expired = null;
  if (month !== undefined && year !== undefined) {
    const now = new Date();
    expired = year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1);
  }
  return {
    raw: {
      brand,
      bin: number.slice(0, number.length >= 16 ? 8 : 6),
      last4: number.slice(-4),
      length: number.length,
      luhn_valid: luhn(number),
      expired,
    },
  };
};
`,
};
