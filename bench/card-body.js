'use strict';
/** The card a create sends (bench/scenarios.js, bench/round-trips.js): a new number on every call. */
const { luhnCheckDigit } = require('../dist/src/common/luhn');

let cardCounter = 0;

/** A 16-digit Visa-like number with a correct Luhn check digit, different on every call. */
function nextCardNumber() {
  cardCounter += 1;
  const payload = `4${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}${String(cardCounter % 1e8).padStart(8, '0')}`;
  return payload + luhnCheckDigit(payload);
}

function cardBody() {
  return {
    type: 'card',
    data: { number: nextCardNumber(), expiration_month: 12, expiration_year: 2030 },
    metadata: { k: 'v' },
  };
}

module.exports = { cardBody };
