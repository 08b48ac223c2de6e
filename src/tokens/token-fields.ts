import { ApiError } from '../common/api-error';
import { mergePatch } from '../common/merge-patch';
import { ExpressionEngine, expressionMessage } from '../expressions';
import { validateContainers, normalizeContainer } from '../access/containers';
import { parseExpiresAt } from './rules/expires-at';
import { readPrivacy } from './rules/privacy';
import { addError, FieldErrors } from '../common/field-errors';
import { readStringMap } from '../common/string-map';
import { defaultsFor, isTokenType, TokenType, validateTokenData } from './rules/token-types';

/** Everything a token holds besides its id and audit columns, validated and with type defaults applied. */
export interface TokenFields {
  type: TokenType;
  data: unknown;
  mask: unknown;
  containers: string[];
  metadata: Record<string, string> | null;
  searchIndexes: string[] | null;
  fingerprintExpression: string;
  deduplicateToken: boolean | null;
  expiresAt: Date | null;
}

const MAX_SEARCH_INDEXES = 20;
const MAX_EXPRESSION = 2000;

const CREATE_FIELDS = new Set([
  'id',
  'type',
  'data',
  'mask',
  'containers',
  'metadata',
  'search_indexes',
  'fingerprint_expression',
  'deduplicate_token',
  'expires_at',
  'privacy',
]);
const PATCH_FIELDS = new Set([...CREATE_FIELDS].filter((f) => f !== 'id' && f !== 'type'));

function join(prefix: string, path: string): string {
  return prefix === '' ? path : `${prefix}.${path}`;
}

/**
 * Reads a create-token request (POST /tokens body or a /tokenize definition at `prefix`). Every problem is
 * collected under its request path; messages never quote the sensitive value.
 */
export function readCreateRequest(
  body: Record<string, unknown>,
  engine: ExpressionEngine,
  now: Date,
  prefix = '',
): { fields: TokenFields; id: string | undefined } {
  const errors: FieldErrors = {};
  for (const key of Object.keys(body)) {
    if (!CREATE_FIELDS.has(key)) {
      addError(errors, join(prefix, key), 'is not a token field');
    }
  }
  if (!isTokenType(body.type)) {
    addError(errors, join(prefix, 'type'), 'must be one of token, card, bank');
    throw ApiError.validation(errors);
  }
  const type = body.type;
  const defaults = defaultsFor(type);
  if (body.id !== undefined && typeof body.id !== 'string') {
    addError(errors, join(prefix, 'id'), 'must be a string');
  }
  const fields: TokenFields = {
    type,
    data: body.data,
    mask: body.mask === undefined ? defaults.mask : body.mask,
    containers: defaults.containers,
    metadata: null,
    searchIndexes: null,
    fingerprintExpression: defaults.fingerprintExpression,
    deduplicateToken: null,
    expiresAt: null,
  };
  readReplaceable(fields, body, now, prefix, errors);
  readPrivacy(fields, body, join(prefix, 'privacy'), true, errors);
  readMetadata(fields, body.metadata ?? null, prefix, errors);
  Object.assign(errors, validateTokenData(type, body.data, join(prefix, 'data')));
  checkExpressions(fields, engine, prefix, errors);
  if (Object.keys(errors).length > 0) {
    throw ApiError.validation(errors);
  }
  return { fields, id: body.id as string | undefined };
}

/** Applies a merge-patch body: data, mask and metadata merge (RFC 7386); the other fields replace. */
export function applyPatch(
  current: TokenFields,
  patch: Record<string, unknown>,
  engine: ExpressionEngine,
  now: Date,
): TokenFields {
  const errors: FieldErrors = {};
  for (const key of Object.keys(patch)) {
    if (!PATCH_FIELDS.has(key)) {
      addError(errors, key, key === 'id' || key === 'type' ? 'cannot be changed' : 'is not a token field');
    }
  }
  const next: TokenFields = { ...current };
  if ('data' in patch) {
    next.data = mergePatch(current.data, patch.data);
    Object.assign(errors, validateTokenData(current.type, next.data));
  }
  if ('mask' in patch) {
    next.mask = patch.mask === null ? null : mergePatch(current.mask, patch.mask);
  }
  if ('metadata' in patch) {
    readMetadata(
      next,
      patch.metadata === null ? null : mergePatch(current.metadata ?? {}, patch.metadata),
      '',
      errors,
    );
  }
  readReplaceable(next, patch, now, '', errors);
  readPrivacy(next, patch, 'privacy', false, errors);
  checkExpressions(next, engine, '', errors);
  if (Object.keys(errors).length > 0) {
    throw ApiError.validation(errors);
  }
  return next;
}

function readReplaceable(
  fields: TokenFields,
  body: Record<string, unknown>,
  now: Date,
  prefix: string,
  errors: FieldErrors,
): void {
  if (body.containers !== undefined) {
    const containerErrors = validateContainers(body.containers, join(prefix, 'containers'));
    Object.assign(errors, containerErrors);
    if (Object.keys(containerErrors).length === 0) {
      fields.containers = (body.containers as string[]).map((c) => normalizeContainer(c) as string);
    }
  }
  if ('search_indexes' in body && body.search_indexes !== undefined) {
    const value = body.search_indexes;
    if (value === null) {
      fields.searchIndexes = null;
    } else if (
      !Array.isArray(value) ||
      value.length > MAX_SEARCH_INDEXES ||
      !value.every((v) => typeof v === 'string' && v.length <= MAX_EXPRESSION)
    ) {
      addError(
        errors,
        join(prefix, 'search_indexes'),
        `must be an array of at most ${MAX_SEARCH_INDEXES} expressions`,
      );
    } else {
      fields.searchIndexes = value as string[];
    }
  }
  if ('fingerprint_expression' in body && body.fingerprint_expression !== undefined) {
    const value = body.fingerprint_expression;
    if (value === null) {
      fields.fingerprintExpression = defaultsFor(fields.type).fingerprintExpression;
    } else if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_EXPRESSION) {
      addError(errors, join(prefix, 'fingerprint_expression'), 'must be a non-empty expression');
    } else {
      fields.fingerprintExpression = value;
    }
  }
  if ('deduplicate_token' in body && body.deduplicate_token !== undefined) {
    const value = body.deduplicate_token;
    if (value !== null && typeof value !== 'boolean') {
      addError(errors, join(prefix, 'deduplicate_token'), 'must be a boolean');
    } else {
      fields.deduplicateToken = value;
    }
  }
  if ('expires_at' in body && body.expires_at !== undefined) {
    if (body.expires_at === null) {
      fields.expiresAt = null;
    } else {
      const parsed = parseExpiresAt(body.expires_at, now);
      if ('error' in parsed) {
        addError(errors, join(prefix, 'expires_at'), parsed.error);
      } else {
        fields.expiresAt = parsed.date;
      }
    }
  }
}

/** metadata: map<string,string> of non-sensitive values. */
function readMetadata(fields: TokenFields, value: unknown, prefix: string, errors: FieldErrors): void {
  if (value === null) {
    fields.metadata = null;
    return;
  }
  const map = readStringMap(value, join(prefix, 'metadata'), errors);
  if (map !== null) {
    fields.metadata = map;
  }
}

/** Every expression must parse now, so a bad template is a 400 at write time, not a failure at read time. */
function checkExpressions(
  fields: TokenFields,
  engine: ExpressionEngine,
  prefix: string,
  errors: FieldErrors,
): void {
  const tryParse = (template: string, path: string): void => {
    try {
      engine.parse(template);
    } catch (err) {
      addError(errors, path, expressionMessage(err, 'is not a valid expression'));
    }
  };
  tryParse(fields.fingerprintExpression, join(prefix, 'fingerprint_expression'));
  (fields.searchIndexes ?? []).forEach((s, i) => tryParse(s, `${join(prefix, 'search_indexes')}[${i}]`));
  const walk = (value: unknown, path: string, depth: number): void => {
    if (depth > 10) {
      addError(errors, join(prefix, 'mask'), 'is nested too deeply');
    } else if (typeof value === 'string') {
      tryParse(value, path);
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, `${path}[${i}]`, depth + 1));
    } else if (typeof value === 'object' && value !== null) {
      Object.entries(value).forEach(([k, v]) => walk(v, `${path}.${k}`, depth + 1));
    }
  };
  walk(fields.mask, join(prefix, 'mask'), 0);
}
