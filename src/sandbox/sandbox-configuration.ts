import { FieldErrors } from '../common/api-error';
import { SDK_MODULE } from './prelude';
import { MODULE_SOURCES } from './modules';

const MAX_CONFIGURATION_ENTRIES = 100;
const MAX_CONFIGURATION_NAME = 200;
const MAX_CONFIGURATION_VALUE = 10_000;

/** Every module `require` answers inside the sandbox: the reactor SDK, the fetch clients, the pure modules. */
export const SANDBOX_MODULES: readonly string[] = [
  SDK_MODULE,
  'node-fetch',
  'axios',
  ...Object.keys(MODULE_SOURCES),
].sort();

/**
 * `configuration` handed to a proxy transform or a code reactor (`req.configuration`): a flat map of
 * strings. Problems are added to `errors` under `field`; values are never quoted back.
 */
export function checkStringMap(
  value: Record<string, unknown> | null,
  errors: FieldErrors,
  field = 'configuration',
): Record<string, string> | null {
  if (value === null) {
    return null;
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_CONFIGURATION_ENTRIES) {
    errors[field] = [`may hold at most ${MAX_CONFIGURATION_ENTRIES} entries`];
    return null;
  }
  const checked: Record<string, string> = {};
  for (const [name, item] of entries) {
    if (name.length === 0 || name.length > MAX_CONFIGURATION_NAME) {
      errors[field] = [`names must have 1 to ${MAX_CONFIGURATION_NAME} characters`];
      continue;
    }
    const path = `${field}.${name.replace(/[^\x20-\x7e]/g, '?')}`;
    if (typeof item !== 'string') {
      errors[path] = ['must be a string'];
    } else if (item.length > MAX_CONFIGURATION_VALUE) {
      errors[path] = [`must be at most ${MAX_CONFIGURATION_VALUE} characters`];
    } else {
      Object.defineProperty(checked, name, {
        value: item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return checked;
}
