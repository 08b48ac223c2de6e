import { BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';
import { FieldErrors } from './api-error';
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
