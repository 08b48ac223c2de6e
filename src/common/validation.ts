import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { ApiError, FieldErrors } from './api-error';
import { MAX_NESTING } from './limits';
import { refuseNullUnlessNullable } from './null-members';
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

/** True when `value` nests objects or arrays deeper than `limit` levels; iterative, so it cannot overflow itself. */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (typeof current !== 'object' || current === null) {
      continue;
    }
    if (depth >= limit) {
      return true;
    }
    for (const child of Object.values(current)) {
      if (typeof child === 'object' && child !== null) {
        pending.push([child, depth + 1]);
      }
    }
  }
  return false;
}

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

class DepthLimitedValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (this.toValidate(metadata) && nestedDeeperThan(value, MAX_DTO_DEPTH)) {
      throw ApiError.badRequest(`The ${metadata.type} is nested deeper than ${MAX_DTO_DEPTH} levels.`);
    }
    // AsSent objects and arrays are validated as empty stand-ins of their kind, then put back as they came
    const held = new Map<string, unknown>();
    if (this.toValidate(metadata) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
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
