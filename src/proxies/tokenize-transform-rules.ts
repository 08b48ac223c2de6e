import { EXPRESSION_LIMITS, ExpressionError } from '../expressions';
import type { ProxyTransformItemDto, StoredTransform } from './dto/proxy-transform.dto';

/** Parses one template; throws ExpressionError when it does not (the engine's parse). */
export type ParseExpression = (template: string) => void;

const IDENTIFIER = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * A `tokenize` entry: `options.token` is a token create body (type, and data or encrypted) whose expressions
 * parse, `options.identifier` names it once per list, `options.location` is a JSON path of names.
 */
export function checkTokenize(
  item: ProxyTransformItemDto,
  fail: (field: string, message: string) => void,
  parse: ParseExpression,
  jsonLocation: RegExp,
  identifiers: Set<string>,
): StoredTransform {
  const { identifier, location } = item.options ?? {};
  const token = item.options?.token as Record<string, unknown> | null | undefined;
  if (typeof token !== 'object' || token === null || Array.isArray(token)) {
    fail('options.token', 'is required: the token to create, as a POST /tokens body');
  } else {
    if (typeof token.type !== 'string' || token.type === '') {
      fail('options.token.type', 'is required');
    }
    if ((token.data === undefined || token.data === null) && token.encrypted === undefined) {
      fail('options.token.data', 'is required (or encrypted)');
    }
    const error = firstParseError(token, parse, 0);
    if (error !== null) {
      fail('options.token', `holds an expression that does not parse: ${error}`);
    }
  }
  if (identifier !== undefined) {
    if (!IDENTIFIER.test(identifier)) {
      fail('options.identifier', 'must be 1 to 100 letters, digits, _ or -');
    } else if (identifiers.has(identifier)) {
      fail('options.identifier', 'is already used by another tokenize transform of this list');
    }
    identifiers.add(identifier);
  }
  if (location !== undefined && !jsonLocation.test(location)) {
    fail('options.location', 'must be a JSON path of names such as $.card');
  }
  const options: NonNullable<StoredTransform['options']> = { token: token ?? undefined };
  if (identifier !== undefined) {
    options.identifier = identifier;
  }
  if (location !== undefined) {
    options.location = location;
  }
  return { type: 'tokenize', options };
}

/** The message of the first string leaf whose expression does not parse; null when all do. */
function firstParseError(value: unknown, parse: ParseExpression, depth: number): string | null {
  if (typeof value === 'string') {
    if (!value.includes('{{') && !value.includes('{%')) {
      return null;
    }
    try {
      parse(value);
      return null;
    } catch (err) {
      return err instanceof ExpressionError ? err.message : 'the expression is not valid';
    }
  }
  if (typeof value !== 'object' || value === null) {
    return null;
  }
  if (depth >= EXPRESSION_LIMITS.depth) {
    return `the token is nested deeper than ${EXPRESSION_LIMITS.depth} levels`;
  }
  for (const item of Object.values(value)) {
    const error = firstParseError(item, parse, depth + 1);
    if (error !== null) {
      return error;
    }
  }
  return null;
}
