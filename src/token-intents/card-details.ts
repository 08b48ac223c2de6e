/** What a card token intent shows of its card: never the number's middle digits or the CVC. */
export interface CardDetails {
  bin: string;
  last4: string;
  brand: string;
  expiration_month?: number;
  expiration_year?: number;
}

const BRANDS: [RegExp, string][] = [
  [/^4/, 'visa'],
  [/^(5[1-5]|222[1-9]|22[3-9]|2[3-6]|27[01]|2720)/, 'mastercard'],
  [/^3[47]/, 'american-express'],
  [/^(6011|65|64[4-9])/, 'discover'],
  [/^(36|30[0-5]|3095|3[89])/, 'diners-club'],
  [/^35(2[89]|[3-8])/, 'jcb'],
  [/^62/, 'china-union-pay'],
  [/^(50|5[6-9]|6)/, 'maestro'],
];

/** The card details of validated card data (`number`, `expiration_month`, `expiration_year`). */
export function cardDetails(data: unknown): CardDetails {
  const card = data as { number: string; expiration_month?: number; expiration_year?: number };
  const number = card.number;
  const details: CardDetails = {
    bin: number.slice(0, number.length >= 16 ? 8 : 6),
    last4: number.slice(-4),
    brand: BRANDS.find(([prefix]) => prefix.test(number))?.[1] ?? 'unknown',
  };
  if (card.expiration_month !== undefined) {
    details.expiration_month = card.expiration_month;
  }
  if (card.expiration_year !== undefined) {
    details.expiration_year = card.expiration_year;
  }
  return details;
}

/** What a bank token intent shows of its account. */
export function bankDetails(data: unknown): { routing_number: string; account_number_last4: string } {
  const bank = data as { routing_number: string; account_number: string };
  return { routing_number: bank.routing_number, account_number_last4: bank.account_number.slice(-4) };
}
