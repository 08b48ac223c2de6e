import { addError, FieldErrors } from '../common/field-errors';

const CONTAINER_PATTERN = /^\/([A-Za-z0-9_-]+\/)+$/;
export const MAX_CONTAINERS = 100;

/** ^/([A-Za-z0-9_-]+/)+$ ; returns normalized lower-case path or null when invalid */
export function normalizeContainer(path: string): string | null {
  return typeof path === 'string' && CONTAINER_PATTERN.test(path) ? path.toLowerCase() : null;
}

/** A non-empty array of at most 100 valid container paths, unique after normalization. */
export function validateContainers(value: unknown, path = 'containers'): FieldErrors {
  const errors: FieldErrors = {};
  if (!Array.isArray(value)) {
    addError(errors, path, 'must be an array');
    return errors;
  }
  if (value.length === 0) {
    addError(errors, path, 'must contain at least one container');
    return errors;
  }
  if (value.length > MAX_CONTAINERS) {
    addError(errors, path, `must contain at most ${MAX_CONTAINERS} containers`);
    return errors;
  }
  const seen = new Set<string>();
  value.forEach((item: unknown, index) => {
    const itemPath = `${path}[${index}]`;
    if (typeof item !== 'string') {
      addError(errors, itemPath, 'must be a string');
      return;
    }
    const normalized = normalizeContainer(item);
    if (normalized === null) {
      addError(errors, itemPath, 'must look like /segment/.../ with letters, digits, _ or - in each segment');
    } else if (seen.has(normalized)) {
      addError(errors, itemPath, 'duplicates another container (compared case-insensitively)');
    } else {
      seen.add(normalized);
    }
  });
  return errors;
}

/** Access rules may also name the root `/`, which covers every container. */
export function normalizeRuleContainer(path: string): string | null {
  return path === '/' ? '/' : normalizeContainer(path);
}

/** True when the rule's container is a prefix of the token's: '/pci/' covers '/pci/high/', '/pc/' does not cover '/pci/'. */
export function containerCovers(ruleContainer: string, tokenContainer: string): boolean {
  const rule = normalizeRuleContainer(ruleContainer);
  const token = normalizeContainer(tokenContainer);
  // Both end in '/', so a plain prefix test only ever matches whole segments
  return rule !== null && token !== null && token.startsWith(rule);
}
