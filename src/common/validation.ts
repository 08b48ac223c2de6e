import { BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { ApiError, FieldErrors } from './api-error';
import { problem } from './problem-details';

/** Flattens class-validator errors into `{ 'path.to.field': [messages] }` without echoing values. */
export function flattenValidationErrors(errors: ValidationError[], prefix = ''): FieldErrors {
  const out: FieldErrors = {};
  for (const error of errors) {
    const path = prefix === '' ? error.property : `${prefix}.${error.property}`;
    if (error.constraints !== undefined) {
      out[path] = Object.values(error.constraints).map((m) => m.replace(/^\S+ /, `${path} `));
    }
    Object.assign(out, flattenValidationErrors(error.children ?? [], path));
  }
  return out;
}

export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) =>
      new BadRequestException({
        problem: problem(400, 'One or more validation errors occurred.', flattenValidationErrors(errors)),
      }),
  });
}

/** Validates a plain object against a DTO class the way the global pipe does (for hand-split inputs). */
export function validatePlain<T extends object>(cls: new () => T, plain: Record<string, unknown>): T {
  const instance = plainToInstance(cls, plain);
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, validationError: { target: false, value: false } });
  if (errors.length > 0) {
    throw ApiError.validation(flattenValidationErrors(errors));
  }
  return instance;
}
