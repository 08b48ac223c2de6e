import { addError, FieldErrors } from '../common/field-errors';
import { ApiError } from '../common/api-error';
import { readStringMap } from '../common/string-map';
import { REQUEST_PART } from './multipart-upload';

/** The metadata of an upload's `request` part (JSON text `{"metadata": {...}}`); none sent is `{}`. */
export function readDocumentRequest(text: string | undefined): Record<string, string> {
  if (text === undefined || text.trim() === '') {
    return {};
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw ApiError.field(REQUEST_PART, 'must be JSON text such as {"metadata": {"name": "value"}}');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw ApiError.field(REQUEST_PART, 'must be a JSON object');
  }
  const errors: FieldErrors = {};
  for (const key of Object.keys(value)) {
    if (key !== 'metadata') {
      addError(errors, `${REQUEST_PART}.${key}`, 'is not a property of the upload request');
    }
  }
  const metadata = readStringMap(
    (value as { metadata?: unknown }).metadata ?? {},
    `${REQUEST_PART}.metadata`,
    errors,
  );
  if (metadata === null || Object.keys(errors).length > 0) {
    throw ApiError.validation(errors);
  }
  return metadata;
}
