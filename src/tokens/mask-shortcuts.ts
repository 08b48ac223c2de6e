import { defaultsFor } from './rules/token-types';

/** What maskShortcut() answers when the mask needs the expression engine. */
export const NO_SHORTCUT = Symbol('no shortcut');

type Leaf = (data: Record<string, unknown>) => unknown;

const ASCII_DIGITS = /^[0-9]*$/;

/** `{{ data.<field> }}` of a string, finite number or boolean: the value itself, as the typed render gives it. */
function field(name: string): Leaf {
  return (data) => {
    const value = Object.hasOwn(data, name) ? data[name] : undefined;
    return typeof value === 'string' ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value))
      ? value
      : NO_SHORTCUT;
  };
}

/** `{{ data.<field> | reveal_last: 4 }}` of a string of ASCII digits: an X for each digit but the last 4. */
function revealLast4(name: string): Leaf {
  return (data) => {
    const value = Object.hasOwn(data, name) ? data[name] : undefined;
    return typeof value === 'string' && ASCII_DIGITS.test(value)
      ? 'X'.repeat(Math.max(0, value.length - 4)) + value.slice(-4)
      : NO_SHORTCUT;
  };
}

/** The leaves of the card and bank default masks, by template text. */
const LEAVES = new Map<string, Leaf>([
  ['{{ data.number | reveal_last: 4 }}', revealLast4('number')],
  ['{{ data.expiration_month }}', field('expiration_month')],
  ['{{ data.expiration_year }}', field('expiration_year')],
  ['{{ data.routing_number }}', field('routing_number')],
  ['{{ data.account_number | reveal_last: 4 }}', revealLast4('account_number')],
]);

for (const type of ['card', 'bank'] as const) {
  for (const template of Object.values(defaultsFor(type).mask as Record<string, string>)) {
    if (!LEAVES.has(template)) {
      throw new Error(`mask shortcuts: no leaf for the default ${type} mask's ${template}`);
    }
  }
}

/**
 * What the engine's renderDeep gives a mask made only of default card and bank mask leaves (a card token's
 * mask, as stored), for data of the plain shapes those types validate, without a Liquid context per leaf.
 * NO_SHORTCUT for any other mask or data, which the engine renders.
 */
export function maskShortcut(mask: unknown, data: unknown): unknown {
  if (
    typeof mask !== 'object' ||
    mask === null ||
    Array.isArray(mask) ||
    typeof data !== 'object' ||
    data === null ||
    Array.isArray(data)
  ) {
    return NO_SHORTCUT;
  }
  const entries = Object.entries(mask);
  const out: [string, unknown][] = [];
  for (const [key, template] of entries) {
    const leaf = typeof template === 'string' ? LEAVES.get(template) : undefined;
    const value = leaf === undefined ? NO_SHORTCUT : leaf(data as Record<string, unknown>);
    if (value === NO_SHORTCUT) {
      return NO_SHORTCUT;
    }
    out.push([key, value]);
  }
  return entries.length === 0 ? NO_SHORTCUT : Object.fromEntries(out);
}
