import { ApiError } from '../common/api-error';
import { setAtPath } from '../common/set-at-path';
import type { StoredTransform } from './dto/proxy-transform.dto';
import type { HeaderMap } from './proxy-request';

/** A body and its headers between two transforms of a list. */
export interface TransformState {
  headers: HeaderMap;
  body: Buffer | undefined;
}

/**
 * The `mask` transform's code, run in the sandbox (the expression is the tenant's: a slow one must not
 * hold the vault's event loop). In each section the expression matches, every occurrence of a value a group
 * captured becomes the replacement character, once per character of the value.
 */
export const MASK_CODE = `module.exports = async function (req) {
  const { body, expression, replacement } = req.args;
  const groups = new RegExp(expression + '|').exec('').length - 1;
  const masked = body.replace(new RegExp(expression, 'g'), (section, ...rest) => {
    let out = section;
    for (const value of rest.slice(0, groups)) {
      if (typeof value === 'string' && value !== '') {
        out = out.split(value).join(replacement.repeat([...value].length));
      }
    }
    return out;
  });
  return { body: masked };
};`;

/** `append_json`, `append_text` and `append_header`: what they add needs no code of the tenant's. */
export function applyAppend(transform: StoredTransform, state: TransformState): TransformState {
  const value = transform.options?.value ?? '';
  const location = transform.options?.location ?? '';
  switch (transform.type) {
    case 'append_text':
      return { ...state, body: Buffer.concat([state.body ?? Buffer.alloc(0), Buffer.from(value)]) };
    case 'append_header':
      return { ...state, headers: { ...state.headers, [location]: value } };
    case 'append_json': {
      const root = jsonObjectOf(state.body);
      setAtPath(root, location.replace(/^\$\./, '').split('.'), value as unknown);
      return { ...state, body: Buffer.from(JSON.stringify(root)) };
    }
    case 'code':
    case 'mask':
    case 'tokenize':
      return state;
  }
}

function jsonObjectOf(body: Buffer | undefined): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse((body ?? Buffer.alloc(0)).toString('utf8'));
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError(502, "The destination's response is not a JSON object: append_json cannot add to it.");
  }
  return value as Record<string, unknown>;
}
