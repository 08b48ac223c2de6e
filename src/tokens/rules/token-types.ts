import { luhnCheckDigit } from '../../common/luhn';
import { addError, FieldErrors } from '../../common/field-errors';

export const TOKEN_TYPES = ['token', 'card', 'bank'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

export interface TokenTypeDefaults {
  containers: string[];
  fingerprintExpression: string;
  /** null when the type has no default mask */
  mask: unknown;
}

export function isTokenType(value: unknown): value is TokenType {
  return typeof value === 'string' && (TOKEN_TYPES as readonly string[]).includes(value);
}

/** Per-type defaults (DESIGN §7). Returns a fresh object on every call so callers may mutate it. */
export function defaultsFor(type: TokenType): TokenTypeDefaults {
  switch (type) {
    case 'token':
      return { containers: ['/general/high/'], fingerprintExpression: '{{ data | stringify }}', mask: null };
    case 'card':
      return {
        containers: ['/pci/high/'],
        fingerprintExpression: '{{ data.number }}',
        mask: {
          number: '{{ data.number | reveal_last: 4 }}',
          expiration_month: '{{ data.expiration_month }}',
          expiration_year: '{{ data.expiration_year }}',
        },
      };
    case 'bank':
      return {
        containers: ['/bank/high/'],
        fingerprintExpression: '{{ data.account_number }}|{{ data.routing_number }}',
        mask: {
          routing_number: '{{ data.routing_number }}',
          account_number: '{{ data.account_number | reveal_last: 4 }}',
        },
      };
  }
}

/** Luhn (mod 10) check over a string of ASCII digits; false for anything else. */
export function luhnValid(digits: string): boolean {
  return /^\d+$/.test(digits) && luhnCheckDigit(digits.slice(0, -1)) === digits.slice(-1);
}

/** ABA routing number checksum: 3*(d1+d4+d7) + 7*(d2+d5+d8) + (d3+d6+d9) ≡ 0 (mod 10). */
export function abaRoutingValid(digits: string): boolean {
  if (!/^\d{9}$/.test(digits)) {
    return false;
  }
  const weights = [3, 7, 1];
  let sum = 0;
  for (let i = 0; i < 9; i++) {
    sum += (digits.charCodeAt(i) - 48) * weights[i % 3];
  }
  return sum % 10 === 0;
}

/** Validate data for the type; prefix paths with `prefix` (default 'data'). Returns errors (empty object = valid). */
export function validateTokenData(type: TokenType, data: unknown, prefix = 'data'): FieldErrors {
  const errors: FieldErrors = {};
  if (data === undefined || data === null) {
    addError(errors, prefix, 'is required');
    return errors;
  }
  switch (type) {
    case 'token':
      break;
    case 'card':
      validateFields(errors, data, prefix, CARD_FIELDS, 'is not a card field');
      break;
    case 'bank':
      validateFields(errors, data, prefix, BANK_FIELDS, 'is not a bank field');
      break;
  }
  return errors;
}

/** Returns an error message for a present value, or null when it is valid. */
type FieldCheck = (value: unknown) => string | null;

interface FieldRule {
  required: boolean;
  check: FieldCheck;
}

const CARD_FIELDS: Record<string, FieldRule> = {
  number: {
    required: true,
    check: (v) => {
      if (typeof v !== 'string') {
        return 'must be a string';
      }
      if (!/^\d{13,19}$/.test(v)) {
        return 'must be 13 to 19 digits without separators';
      }
      return luhnValid(v) ? null : 'must pass the Luhn check';
    },
  },
  expiration_month: {
    required: false,
    check: (v) => (isIntegerIn(v, 1, 12) ? null : 'must be an integer from 1 to 12'),
  },
  expiration_year: {
    required: false,
    check: (v) => (isIntegerIn(v, 1000, 9999) ? null : 'must be a four-digit integer'),
  },
  cvc: {
    required: false,
    check: (v) => (typeof v === 'string' && /^\d{3,4}$/.test(v) ? null : 'must be a string of 3 or 4 digits'),
  },
};

const BANK_FIELDS: Record<string, FieldRule> = {
  routing_number: {
    required: true,
    check: (v) => {
      if (typeof v !== 'string') {
        return 'must be a string';
      }
      if (!/^\d{9}$/.test(v)) {
        return 'must be 9 digits';
      }
      return abaRoutingValid(v) ? null : 'must have a valid ABA routing checksum';
    },
  },
  account_number: {
    required: true,
    check: (v) => {
      if (typeof v !== 'string') {
        return 'must be a string';
      }
      return /^\d{1,17}$/.test(v) ? null : 'must be 1 to 17 digits';
    },
  },
};

function validateFields(
  errors: FieldErrors,
  data: unknown,
  prefix: string,
  rules: Record<string, FieldRule>,
  unknownMessage: string,
): void {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    addError(errors, prefix, 'must be an object');
    return;
  }
  const record = data as Record<string, unknown>;
  for (const [field, rule] of Object.entries(rules)) {
    // Own properties only: an inherited name must never count as a supplied field
    const value = Object.hasOwn(record, field) ? record[field] : undefined;
    if (value === undefined || (value === null && rule.required)) {
      if (rule.required) {
        addError(errors, `${prefix}.${field}`, 'is required');
      }
      continue;
    }
    const message = rule.check(value);
    if (message !== null) {
      addError(errors, `${prefix}.${field}`, message);
    }
  }
  for (const field of Object.keys(record)) {
    if (!Object.hasOwn(rules, field)) {
      addError(errors, `${prefix}.${field}`, unknownMessage);
    }
  }
}

function isIntegerIn(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}
