/**
 * DTO instances carry every declared field (undefined when absent), nested DTOs too; a merge patch needs
 * only what was sent.
 */
export function definedFields(dto: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(dto)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, isObject(v) ? definedFields(v) : v]),
  );
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The same for the top level only: for bodies whose nested values are free JSON (token data, metadata),
 * which never holds undefined and is not worth walking on every write.
 */
export function definedTopLevelFields(dto: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(dto).filter(([, v]) => v !== undefined));
}
