import { fail, VaultFilter } from './filter-kit';
import { jsonPath } from './json-path';

/** Compact JSON of any JSON value; a string becomes a quoted JSON string literal. */
export function toJson(value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return fail('the value cannot be serialized to JSON');
  }
  return json ?? fail('the value cannot be serialized to JSON');
}

/** `stringify` / `json_stringify`: `{{ data | stringify }}` is the compact JSON of data (strings quoted). */
export const stringify: VaultFilter = (_run, input) => toJson(input);

export const jsonFilters: Record<string, VaultFilter> = {
  stringify,
  json_stringify: stringify,
  json: jsonPath,
};
