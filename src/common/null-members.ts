import { getMetadataStorage, IS_OPTIONAL } from 'class-validator';

type Storage = ReturnType<typeof getMetadataStorage>;
type Rule = ReturnType<Storage['getTargetValidationMetadatas']>[number];

/** Where @nestjs/swagger keeps a property's ApiProperty options (its DECORATORS.API_MODEL_PROPERTIES). */
const API_PROPERTY = 'swagger/apiModelProperties';
const INSTALLED = Symbol('null members refused');
const patched = new WeakSet<Rule>();

/** True when the property's OpenAPI description says `nullable: true`: null has a meaning there. */
export function declaredNullable(target: unknown, property: string): boolean {
  if (typeof target !== 'function') {
    return false;
  }
  const options = Reflect.getMetadata(API_PROPERTY, target.prototype as object, property) as
    { nullable?: unknown } | undefined;
  return options?.nullable === true;
}

/**
 * `@IsOptional()` skips every rule for null as for an absent member, so a `"formula": null` reached services
 * that read it as an object (a 500). Here an optional member skips its rules only when absent, or when null
 * and documented `nullable` (its null then means something: clear, remove, default); any other null is
 * validated, and refused by the member's type rules with a 400 naming it. openapi.json says which is which.
 */
export function refuseNullUnlessNullable(storage: Storage = getMetadataStorage()): void {
  const marked = storage as Storage & { [INSTALLED]?: true };
  if (marked[INSTALLED]) {
    return;
  }
  marked[INSTALLED] = true;
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  storage.getTargetValidationMetadatas = (...args) => {
    const rules = lookup(...args);
    for (const rule of rules) {
      if (rule.name === IS_OPTIONAL && !patched.has(rule)) {
        patched.add(rule);
        const { target, propertyName } = rule;
        rule.constraints = [
          (_object: unknown, value: unknown) =>
            value !== undefined && (value !== null || !declaredNullable(target, propertyName)),
        ];
      }
    }
    return rules;
  };
}
