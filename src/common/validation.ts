import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync, ValidationTypes } from 'class-validator';
import { ApiError, FieldErrors } from './api-error';
import { MAX_NESTING } from './limits';
import { refuseNullUnlessNullable } from './null-members';
import { isDepthChecked, nestedDeeperThan } from './nesting';
import { cacheValidationMetadata } from './validation-metadata-cache';

/** Longest member name an error quotes: names come from the caller and may carry data. */
const MAX_NAME = 64;

/**
 * A caller-given member name as errors may show it: printable ASCII, at most 64 characters, and no run of
 * 6 or more digits (a card number sent as a member name is not echoed).
 */
export function boundedName(name: string): string {
  const printable = name
    .replace(/[^\x20-\x7e]/g, '?')
    .replace(/\d{6,}/g, (digits) => '#'.repeat(digits.length));
  return printable.length > MAX_NAME ? `${printable.slice(0, MAX_NAME)}…` : printable;
}

/**
 * Flattens class-validator errors into `{ 'path.to.field': [messages] }` without echoing values: a
 * missing member says "is required" once, a null one "must not be null", an unknown member "is not
 * allowed", and member names are bounded (a form-encoded body can turn a whole document into one name).
 */
export function flattenValidationErrors(errors: ValidationError[], prefix = ''): FieldErrors {
  const out: FieldErrors = {};
  for (const error of errors) {
    const name = boundedName(error.property);
    const path = childPath(prefix, name);
    if (error.constraints !== undefined) {
      const constraints = error.constraints;
      let messages: string[];
      if ('whitelistValidation' in constraints) {
        messages = ['is not allowed'];
      } else if (error.value === undefined) {
        messages = [`${path} is required`];
      } else if (error.value === null) {
        messages = [`${path} must not be null`];
      } else {
        // Default messages start with the bare property name; other messages (`each`) are kept as they are
        messages = Object.values(constraints).map((m) =>
          m.startsWith(`${error.property} `) ? `${path}${m.slice(error.property.length)}` : m,
        );
      }
      // defineProperty so a body member named "__proto__" stays an ordinary key of the errors object
      Object.defineProperty(out, path, {
        value: messages,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    for (const [key, value] of Object.entries(flattenValidationErrors(error.children ?? [], path))) {
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    }
  }
  return out;
}

/** Request paths as the services write them: `rules[0].container`, not `rules.0.container`. */
function childPath(prefix: string, property: string): string {
  if (prefix === '') {
    return property;
  }
  return /^\d+$/.test(property) ? `${prefix}[${property}]` : `${prefix}.${property}`;
}

/** DTO bodies are shallow; class-transformer recurses without a limit, so deeper input would overflow the stack (a 500). */
export const MAX_DTO_DEPTH = MAX_NESTING;

/** Free-form members by DTO class prototype (see AsSent). */
const AS_SENT_MEMBERS = new WeakMap<object, string[]>();

/**
 * A free-form JSON member (token data, a mask, metadata) that is stored and returned, never merged into other
 * objects: it reaches the handler exactly as sent. The pipe's own copy would lose every `__proto__`,
 * `constructor` and `prototype` member at any depth (deleted as prototype-pollution keys, and class-transformer
 * fails on an object whose `constructor` is not a function), silently changing the data a caller stores.
 */
export function AsSent(): PropertyDecorator {
  return (target, property) => {
    AS_SENT_MEMBERS.set(target, [...(AS_SENT_MEMBERS.get(target) ?? []), String(property)]);
  };
}

function asSentMembers(metatype: unknown): string[] {
  const members: string[] = [];
  let proto = (metatype as { prototype?: object } | undefined)?.prototype;
  while (proto) {
    members.push(...(AS_SENT_MEMBERS.get(proto) ?? []));
    proto = Object.getPrototypeOf(proto) as object | undefined;
  }
  return members;
}

/** DTO classes marked HandValidated, and the member names of those that qualify (see handValidatedMembers). */
const HAND_VALIDATED = new WeakSet<object>();
const handValidatedNames = new WeakMap<object, Set<string> | null>();

/**
 * Marks a body DTO whose members are all `@Allow()` and whose service validates every value by hand (the
 * token create and patch bodies: token-fields.ts). The pipe then only refuses unknown members, and takes a
 * body of known members whose values are plain JSON (objects only in AsSent members) as it came, without the
 * copies and walks of class-transformer and class-validator, whose result for such a body is the same.
 */
export function HandValidated(): ClassDecorator {
  return (target) => {
    HAND_VALIDATED.add(target);
  };
}

/** The member names of a HandValidated class; null (take the full pipe) if it carries any rule but @Allow(). */
function handValidatedMembers(metatype: unknown): Set<string> | null {
  if (typeof metatype !== 'function' || !HAND_VALIDATED.has(metatype)) {
    return null;
  }
  let names = handValidatedNames.get(metatype);
  if (names === undefined) {
    const rules = getMetadataStorage().getTargetValidationMetadatas(metatype, '', false, false);
    names = rules.every((rule) => rule.type === ValidationTypes.WHITELIST)
      ? new Set(rules.map((rule) => rule.propertyName))
      : null;
    handValidatedNames.set(metatype, names);
  }
  return names;
}

/**
 * The DTO instance the full pipe would make of `body`, when it is a plain object of known members whose
 * values are primitives or arrays of primitives (any JSON in AsSent members); undefined otherwise.
 */
function acceptedAsSent(body: unknown, metatype: new () => object, names: Set<string>): object | undefined {
  if (typeof body !== 'object' || body === null || Object.getPrototypeOf(body) !== Object.prototype) {
    return undefined;
  }
  const asSent = asSentMembers(metatype);
  const instance = new metatype() as Record<string, unknown>;
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (!names.has(name)) {
      return undefined;
    }
    if (asSent.includes(name) || !isObjectLike(value)) {
      instance[name] = value;
    } else if (Array.isArray(value) && !(value as unknown[]).some(isObjectLike)) {
      instance[name] = [...(value as unknown[])];
    } else {
      return undefined;
    }
  }
  return instance;
}

/** DTO classes whose members are all optional objects taken as sent, and those members' names (or null). */
const objectMemberNames = new WeakMap<object, Set<string> | null>();

/**
 * The member names of a DTO class whose every member is `@IsOptional() @IsObject() @AsSent()` and carries no
 * other rule (the react body's `args`); null for any other class.
 */
function optionalObjectMembers(metatype: unknown): Set<string> | null {
  if (typeof metatype !== 'function') {
    return null;
  }
  let names = objectMemberNames.get(metatype);
  if (names === undefined) {
    const rules = getMetadataStorage().getTargetValidationMetadatas(metatype, '', false, false);
    const asSent = asSentMembers(metatype);
    const members = new Set(rules.map((rule) => rule.propertyName));
    const one = (member: string, type: string, name: string): boolean =>
      rules.filter(
        (rule) =>
          rule.propertyName === member &&
          rule.type === type &&
          rule.name === name &&
          rule.each !== true &&
          (rule.groups ?? []).length === 0,
      ).length === 1;
    names =
      members.size > 0 &&
      rules.length === 2 * members.size &&
      [...members].every(
        (member) =>
          asSent.includes(member) &&
          one(member, ValidationTypes.CONDITIONAL_VALIDATION, 'isOptional') &&
          one(member, ValidationTypes.CUSTOM_VALIDATION, 'isObject'),
      )
        ? members
        : null;
    objectMemberNames.set(metatype, names);
  }
  return names;
}

/**
 * The DTO instance the full pipe would make of `body` for a class of optionalObjectMembers: a plain object whose
 * every member is one of `names` holding a plain object (kept as sent, as AsSent does); undefined otherwise.
 */
function acceptedObjects(body: unknown, metatype: new () => object, names: Set<string>): object | undefined {
  if (!isPlainObject(body)) {
    return undefined;
  }
  const instance = new metatype() as Record<string, unknown>;
  for (const [name, value] of Object.entries(body)) {
    if (!names.has(name) || !isPlainObject(value)) {
      return undefined;
    }
    instance[name] = value;
  }
  return instance;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

function isObjectLike(value: unknown): boolean {
  return typeof value === 'object' && value !== null;
}

class DepthLimitedValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (!this.toValidate(metadata)) {
      return super.transform(value, metadata);
    }
    // The body middleware checked request bodies already (request-body.ts, checkParsedBody)
    if (!isDepthChecked(value) && nestedDeeperThan(value, MAX_DTO_DEPTH)) {
      throw ApiError.badRequest(`The ${metadata.type} is nested deeper than ${MAX_DTO_DEPTH} levels.`);
    }
    const names = handValidatedMembers(metadata.metatype);
    const accepted =
      names === null ? undefined : acceptedAsSent(value, metadata.metatype as new () => object, names);
    if (accepted !== undefined) {
      return accepted;
    }
    const objects = optionalObjectMembers(metadata.metatype);
    const asObjects =
      objects === null ? undefined : acceptedObjects(value, metadata.metatype as new () => object, objects);
    if (asObjects !== undefined) {
      return asObjects;
    }
    // AsSent objects and arrays are validated as empty stand-ins of their kind, then put back as they came
    const held = new Map<string, unknown>();
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const body = value as Record<string, unknown>;
      for (const name of asSentMembers(metadata.metatype)) {
        const member = Object.hasOwn(body, name) ? body[name] : undefined;
        if (typeof member === 'object' && member !== null) {
          held.set(name, member);
          body[name] = Array.isArray(member) ? [] : {};
        }
      }
    }
    try {
      const result = (await super.transform(value, metadata)) as unknown;
      for (const [name, member] of held) {
        (result as Record<string, unknown>)[name] = member;
      }
      return result;
    } finally {
      for (const [name, member] of held) {
        (value as Record<string, unknown>)[name] = member;
      }
    }
  }
}

export function createValidationPipe(): ValidationPipe {
  // Before the cache, so the rules it keeps are the ones that refuse null members.
  refuseNullUnlessNullable();
  cacheValidationMetadata();
  return new DepthLimitedValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: true },
    exceptionFactory: (errors) => ApiError.validation(flattenValidationErrors(errors)),
  });
}

/** Validates a plain object against a DTO class the way the global pipe does (for hand-split inputs). */
export function validatePlain<T extends object>(cls: new () => T, plain: Record<string, unknown>): T {
  refuseNullUnlessNullable();
  const instance = plainToInstance(cls, plain);
  const errors = validateSync(instance, {
    whitelist: true,
    forbidNonWhitelisted: true,
    validationError: { target: false, value: true },
  });
  if (errors.length > 0) {
    throw ApiError.validation(flattenValidationErrors(errors));
  }
  return instance;
}
