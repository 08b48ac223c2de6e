import { ApiError, FieldErrors } from '../common/api-error';
import type { FormulaConfigurationItem } from '../reactor-formulas/reactor-formula.entity';

/**
 * A reactor's configuration must match the formula's names and types exactly (spec §4.4): every declared
 * name present, no other name, each value of its declared type. Values are never quoted back.
 */
export function checkReactorConfiguration(
  declared: readonly FormulaConfigurationItem[],
  configuration: Record<string, unknown>,
): Record<string, string | number | boolean> {
  const errors: FieldErrors = {};
  const byName = new Map(declared.map((item) => [item.name, item]));
  const checked: Record<string, string | number | boolean> = {};
  for (const name of Object.keys(configuration)) {
    if (!byName.has(name)) {
      errors[`configuration.${boundedName(name)}`] = ['is not a configuration of the formula'];
    }
  }
  for (const item of declared) {
    const path = `configuration.${item.name}`;
    if (!Object.prototype.hasOwnProperty.call(configuration, item.name)) {
      errors[path] = ['is required'];
      continue;
    }
    const value = configuration[item.name];
    if (typeof value !== item.type || (item.type === 'number' && !Number.isFinite(value))) {
      errors[path] = [`must be a ${item.type}`];
      continue;
    }
    checked[item.name] = value as string | number | boolean;
  }
  if (Object.keys(errors).length > 0) {
    throw ApiError.validation(errors);
  }
  return checked;
}

/** Unknown names come from the caller: show a bounded, printable form only. */
function boundedName(name: string): string {
  const printable = name.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 64 ? `${printable.slice(0, 64)}…` : printable;
}
