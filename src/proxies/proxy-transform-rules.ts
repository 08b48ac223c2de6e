import type { FieldErrors } from '../common/api-error';
import { compileErrorOf } from '../sandbox/compile-check';
import type { ListedTransformType, ProxyTransformItemDto, StoredTransform } from './dto/proxy-transform.dto';
import { checkTokenize, ParseExpression } from './tokenize-transform-rules';

export const MAX_LISTED_TRANSFORMS = 10;

const SIDE_TYPES: Record<'request' | 'response', readonly ListedTransformType[]> = {
  request: ['code', 'tokenize'],
  response: ['code', 'mask', 'tokenize', 'append_json', 'append_text', 'append_header'],
};

/** A header name as HTTP allows it (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** `$.a.b` or `a.b`: names of letters, digits, `_` and `-`. */
const JSON_LOCATION = /^(\$\.)?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * One side's `*_transforms` list, checked: each type on the side that takes it, with the fields it needs
 * (compile errors of `code` apart: 422, like formula code). null when the list was not sent.
 */
export function checkTransformList(
  side: 'request' | 'response',
  list: ProxyTransformItemDto[] | null | undefined,
  errors: FieldErrors,
  compileErrors: FieldErrors,
  parse: ParseExpression,
): StoredTransform[] | null {
  if (list === undefined || list === null) {
    return null;
  }
  const identifiers = new Set<string>();
  return list.map((item, i) => {
    const at = `${side}_transforms[${i}]`;
    const fail = (field: string, message: string) => {
      errors[`${at}.${field}`] = [message];
    };
    return item.type === 'tokenize' && SIDE_TYPES[side].includes('tokenize')
      ? checkTokenize(item, fail, parse, JSON_LOCATION, identifiers)
      : checkItem(side, item, at, errors, compileErrors);
  });
}

function checkItem(
  side: 'request' | 'response',
  item: ProxyTransformItemDto,
  at: string,
  errors: FieldErrors,
  compileErrors: FieldErrors,
): StoredTransform {
  const type = item.type ?? 'code';
  const fail = (field: string, message: string) => {
    errors[`${at}.${field}`] = [message];
  };
  if (!SIDE_TYPES[side].includes(type)) {
    fail('type', `must be one of: ${SIDE_TYPES[side].join(', ')}`);
    return { type };
  }
  const value = item.options?.value;
  const location = item.options?.location;
  switch (type) {
    case 'code': {
      if (item.code === undefined) {
        fail('code', 'is required');
        return { type };
      }
      const error = compileErrorOf(item.code);
      if (error !== null) {
        compileErrors[`${at}.code`] = [`${error.message} (line ${error.line}, column ${error.column})`];
      }
      return { type, code: item.code };
    }
    case 'mask':
      checkMask(item, fail);
      return { type, matcher: 'regex', expression: item.expression, replacement: item.replacement };
    case 'append_json':
      if (value === undefined) {
        fail('options.value', 'is required');
      }
      if (location === undefined || !JSON_LOCATION.test(location)) {
        fail('options.location', 'must be a JSON path of names such as $.meta.source');
      }
      return { type, options: { value, location } };
    case 'append_text':
      if (value === undefined) {
        fail('options.value', 'is required');
      }
      return { type, options: { value } };
    case 'append_header':
      if (value === undefined || /[\r\n\0]/.test(value)) {
        fail('options.value', 'is required, on one line');
      }
      if (location === undefined || !HEADER_NAME.test(location)) {
        fail('options.location', 'must be a header name');
      }
      return { type, options: { value, location: location?.toLowerCase() } };
    case 'tokenize':
      // Checked by checkTokenize, which checkTransformList calls for this type.
      return { type };
  }
}

function checkMask(item: ProxyTransformItemDto, fail: (field: string, message: string) => void): void {
  if (item.matcher === undefined) {
    fail('matcher', 'is required (regex)');
  }
  if (item.replacement === undefined || [...item.replacement].length !== 1) {
    fail('replacement', 'must be exactly one character');
  }
  if (item.expression === undefined) {
    fail('expression', 'is required');
    return;
  }
  let groups: number;
  try {
    // Run on the empty string through an empty alternative: counts the groups without real input.
    groups = (new RegExp(`${item.expression}|`).exec('') ?? []).length - 1;
  } catch {
    fail('expression', 'is not a valid regular expression');
    return;
  }
  if (groups < 1) {
    fail('expression', 'must contain at least one capture group');
  }
}
