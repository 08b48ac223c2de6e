import { STATUS_CODES } from 'node:http';
import { FieldErrors } from './api-error';

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: FieldErrors;
}

export function problem(status: number, detail?: string, errors?: FieldErrors): ProblemDetails {
  return {
    type: `https://www.rfc-editor.org/rfc/rfc9110#status.${status}`,
    title: STATUS_CODES[status] ?? 'Error',
    status,
    ...(detail !== undefined ? { detail } : {}),
    ...(errors !== undefined && Object.keys(errors).length > 0 ? { errors } : {}),
  };
}
