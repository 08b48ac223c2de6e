import { addError, FieldErrors } from '../../common/field-errors';
import { defaultsFor, TokenType } from './token-types';

/**
 * The hosted vault's older way to place a token, still sent by its SDKs: `privacy { classification,
 * impact_level, restriction_policy }`. It maps onto what this vault has, so nothing new is stored:
 * - `classification` and `impact_level` name the container `/<classification>/<impact_level>/` (a part not
 *   sent is taken from the token's container: the type's default on create, the current one on update);
 * - `restriction_policy` is what a reader whose access rule says `mask` sees: `mask` keeps the token's mask
 *   (the type's default mask if it had none), `redact` removes the mask, so such a reader gets no data.
 * `privacy` is accepted on input only; answers show `containers` and `mask` as always.
 */
export const CLASSIFICATIONS = ['general', 'bank', 'pci', 'pii'] as const;
export const IMPACT_LEVELS = ['low', 'moderate', 'high'] as const;
export const RESTRICTION_POLICIES = ['mask', 'redact'] as const;

/** What privacy may change: the token's containers and mask. */
export interface PrivacyTarget {
  type: TokenType;
  containers: string[];
  mask: unknown;
}

const CREATE_KEYS = ['classification', 'impact_level', 'restriction_policy'];
const UPDATE_KEYS = ['impact_level', 'restriction_policy'];

/**
 * Applies `body.privacy` (if sent) to `fields`, after `containers` and `mask` of the same body were read.
 * `creating` allows `classification` (it cannot change afterwards, as in the hosted vault).
 */
export function readPrivacy(
  fields: PrivacyTarget,
  body: Record<string, unknown>,
  path: string,
  creating: boolean,
  errors: FieldErrors,
): void {
  const value = body.privacy;
  if (value === undefined || value === null) {
    return;
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    addError(errors, path, 'must be an object of classification, impact_level and restriction_policy');
    return;
  }
  const privacy = value as Record<string, unknown>;
  const allowed = creating ? CREATE_KEYS : UPDATE_KEYS;
  for (const key of Object.keys(privacy)) {
    if (!allowed.includes(key)) {
      addError(
        errors,
        `${path}.${key}`,
        key === 'classification' ? 'cannot be changed' : 'is not a privacy field',
      );
    }
  }
  const classification = oneOf(privacy, 'classification', CLASSIFICATIONS, path, errors);
  const impactLevel = oneOf(privacy, 'impact_level', IMPACT_LEVELS, path, errors);
  const policy = oneOf(privacy, 'restriction_policy', RESTRICTION_POLICIES, path, errors);

  if (classification !== undefined || impactLevel !== undefined) {
    if (body.containers !== undefined) {
      addError(errors, path, 'cannot be sent with containers: send one or the other');
    } else {
      const placed = containerFor(fields.containers[0], classification, impactLevel);
      fields.containers = [placed, ...fields.containers.slice(1).filter((c) => c !== placed)];
    }
  }
  if (policy === 'redact') {
    if (body.mask !== undefined && body.mask !== null) {
      addError(errors, `${path}.restriction_policy`, 'redact cannot be sent with a mask');
    } else {
      fields.mask = null;
    }
  } else if (policy === 'mask' && fields.mask === null && body.mask === undefined) {
    fields.mask = defaultsFor(fields.type).mask;
  }
}

function oneOf<T extends string>(
  privacy: Record<string, unknown>,
  key: string,
  values: readonly T[],
  path: string,
  errors: FieldErrors,
): T | undefined {
  const value = privacy[key];
  if (value === undefined || value === null) {
    return undefined;
  }
  const normalized = typeof value === 'string' ? value.toLowerCase() : value;
  if (!values.includes(normalized as T)) {
    addError(errors, `${path}.${key}`, `must be one of ${values.join(', ')}`);
    return undefined;
  }
  return normalized as T;
}

/**
 * `/<classification>/<level>/` from the parts sent, the rest from the first two segments of `current`
 * (a one-segment container such as `/custom/` gets the level as its second: `/custom/low/`).
 */
function containerFor(
  current: string,
  classification: string | undefined,
  impactLevel: string | undefined,
): string {
  const [currentClass, currentLevel] = current.split('/').filter((s) => s !== '');
  return `/${classification ?? currentClass}/${impactLevel ?? currentLevel ?? 'high'}/`;
}
