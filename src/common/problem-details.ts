import { STATUS_CODES } from 'node:http';
import { FieldErrors } from './api-error';

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: FieldErrors;
}

/** Field errors one answer lists: a body of a million bad elements must not answer a million messages. */
export const MAX_REPORTED_ERRORS = 50;

export function problem(status: number, detail?: string, errors?: FieldErrors): ProblemDetails {
  if (errors !== undefined) {
    errors = capErrors(errors);
  }
  return {
    type: `https://www.rfc-editor.org/rfc/rfc9110#status.${status}`,
    title: STATUS_CODES[status] ?? 'Error',
    status,
    ...(detail !== undefined ? { detail } : {}),
    ...(errors !== undefined && Object.keys(errors).length > 0 ? { errors } : {}),
  };
}

function capErrors(errors: FieldErrors): FieldErrors {
  const keys = Object.keys(errors);
  if (keys.length <= MAX_REPORTED_ERRORS && keys.every((k) => errors[k].length <= 10)) {
    return errors;
  }
  const capped: FieldErrors = {};
  for (const key of keys.slice(0, MAX_REPORTED_ERRORS)) {
    Object.defineProperty(capped, key, {
      value: errors[key].slice(0, 10),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  if (keys.length > MAX_REPORTED_ERRORS) {
    capped['…'] = [`${keys.length - MAX_REPORTED_ERRORS} more fields have errors`];
  }
  return capped;
}
