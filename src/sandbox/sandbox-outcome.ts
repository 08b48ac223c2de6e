import { ApiError } from '../common/api-error';
import { CustomHttpResponse } from '../common/custom-http-response';
import { isChosenStatus, MAX_CHOSEN_STATUS, MIN_CHOSEN_STATUS } from '../common/limits';
import type { SandboxFailure } from './sandbox.provider';

/** The SDK's error classes and their statuses (DESIGN §7): the status comes from here, never from the code. */
export const SDK_ERROR_STATUS: Record<string, number> = {
  AuthenticationError: 401,
  AuthorizationError: 403,
  BadRequestError: 400,
  InvalidPaymentMethodError: 402,
  InvalidReactorConfigurationError: 400,
  RateLimitError: 429,
  ReactorRuntimeError: 500,
  ServiceUnavailableError: 503,
  BasisTheoryReactorError: 500,
};

const CUSTOM_STATUS_RULE = `CustomHttpResponseError status must be an integer from ${MIN_CHOSEN_STATUS} to ${MAX_CHOSEN_STATUS}.`;

/** Headers code may not set: framing and connection handling belong to the server. */
const RESERVED_HEADERS = new Set([
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'trailer',
  'te',
  'proxy-authenticate',
  'proxy-authorization',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;

/** Turns a failed run into the error the caller gets: the common format, or the code's literal response. */
export function failureToError(
  failure: SandboxFailure,
  source: 'reactor' | 'transform' = 'reactor',
): ApiError | CustomHttpResponse {
  switch (failure.kind) {
    case 'sdk': {
      const status = SDK_ERROR_STATUS[failure.name] ?? 500;
      return new ApiError(status, titleOf(source, failure.name), sanitizeErrors(failure.errors));
    }
    case 'custom_response': {
      if (!isChosenStatus(failure.status)) {
        return new ApiError(500, `The ${source} code chose a status that is not allowed.`, {
          status: [CUSTOM_STATUS_RULE],
        });
      }
      return new CustomHttpResponse(failure.status, sanitizeHeaders(failure.headers), failure.body ?? {});
    }
    case 'error':
      return new ApiError(500, `The ${source} code threw an error.`, {
        error: [String(failure.message).slice(0, 1000)],
      });
    case 'too_large':
      return new ApiError(422, `The ${source} code returned a result larger than 4 MB.`, {
        result: ['The result is too large.'],
      });
    case 'timeout':
      return new ApiError(500, 'The code did not finish within the time limit.', {
        error: ['Execution timed out.'],
      });
    case 'memory':
      return new ApiError(500, 'The code ran out of memory.', { error: ['Memory limit exceeded.'] });
    case 'crashed':
      return new ApiError(500, 'The sandbox stopped while running the code.', {
        error: ['Sandbox failure.'],
      });
  }
}

function titleOf(source: string, name: string): string {
  return `The ${source} code raised ${name.replace(/[^A-Za-z]/g, '')}.`;
}

function sanitizeErrors(errors: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (typeof errors !== 'object' || errors === null) {
    return { error: ['Unknown error.'] };
  }
  for (const [key, value] of Object.entries(errors).slice(0, 100)) {
    const messages = Array.isArray(value) ? value : [value];
    Object.defineProperty(out, key.slice(0, 200), {
      value: messages.slice(0, 100).map((m) => String(m).slice(0, 1000)),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function sanitizeHeaders(headers: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    return out;
  }
  for (const [name, value] of Object.entries(headers).slice(0, 100)) {
    if (!HEADER_NAME.test(name) || RESERVED_HEADERS.has(name.toLowerCase())) {
      continue;
    }
    const text = String(value);
    if (!/[\r\n\0]/.test(text)) {
      out[name] = text.slice(0, 8192);
    }
  }
  return out;
}
