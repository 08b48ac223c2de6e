import { ApiError, FieldErrors } from '../common/api-error';
import type { FormulaRequestParameter, ParameterType } from '../reactor-formulas/reactor-formula.entity';
import { setAtPath } from '../common/set-at-path';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const NUMERIC = /^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

/**
 * Spec §4.4 rules 1-4 on detokenized arguments: only declared parameters are kept (nested ones by dotted
 * name), a missing required parameter is a 400, and values of another type are cast when they can be
 * (numeric strings to numbers, "true"/"false" to booleans, numbers and booleans to strings) or a 400.
 * Error messages name the parameter, never its value.
 */
export function prepareArgs(
  parameters: readonly FormulaRequestParameter[],
  args: unknown,
): { [key: string]: Json } {
  if (args !== undefined && args !== null && !isPlainObject(args)) {
    throw ApiError.field('args', 'must be an object');
  }
  const source = args ?? {};
  const out: { [key: string]: Json } = {};
  const errors: FieldErrors = {};
  for (const parameter of parameters) {
    const path = parameter.name.split('.');
    const value = valueAt(source, path);
    if (value === undefined || value === null) {
      if (!parameter.optional) {
        errors[`args.${parameter.name}`] = ['is required'];
      }
      continue;
    }
    const cast = castTo(parameter.type, value);
    if (cast === undefined) {
      errors[`args.${parameter.name}`] = [`must be a ${parameter.type} (or a value that converts to one)`];
      continue;
    }
    setAtPath(out, path, cast);
  }
  if (Object.keys(errors).length > 0) {
    throw ApiError.validation(errors);
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function valueAt(source: Record<string, unknown>, path: string[]): unknown {
  let current: unknown = source;
  for (const segment of path) {
    if (!isPlainObject(current) || !Object.prototype.hasOwnProperty.call(current, segment)) {
      return undefined;
    }
    current = current[segment];
  }
  return current;
}

/** The value as the declared type, or undefined when it cannot be converted. */
export function castTo(type: ParameterType, value: unknown): Json | undefined {
  switch (type) {
    case 'string':
      if (typeof value === 'string') {
        return value;
      }
      return typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
    case 'number':
      if (typeof value === 'number') {
        return Number.isFinite(value) ? value : undefined;
      }
      if (typeof value === 'string' && NUMERIC.test(value)) {
        const n = Number(value);
        return Number.isFinite(n) ? n : undefined;
      }
      return undefined;
    case 'boolean':
      if (typeof value === 'boolean') {
        return value;
      }
      if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) {
        return value.trim().toLowerCase() === 'true';
      }
      return undefined;
  }
}
