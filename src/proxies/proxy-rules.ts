import { ApiError, FieldErrors } from '../common/api-error';
import { checkDestinationUrl, StaticCheckOptions } from '../outbound';
import { compileErrorOf } from '../sandbox/compile-check';
import type { ProxyBodyDto, ProxyTransformDto } from './dto/proxy.dto';

const MAX_CONFIGURATION_ENTRIES = 100;
const MAX_CONFIGURATION_NAME = 200;
const MAX_CONFIGURATION_VALUE = 10_000;

export interface CheckedProxy {
  destinationUrl: string;
  requestTransformCode: string | null;
  responseTransformCode: string | null;
  configuration: Record<string, string> | null;
  requireAuth: boolean;
}

/**
 * The rules of a proxy body the DTO cannot state: the destination passes the outbound guard's static
 * checks, configuration is a flat map of strings, and transform code compiles (422, like formula code).
 */
export function checkProxyBody(dto: ProxyBodyDto, outbound: StaticCheckOptions = {}): CheckedProxy {
  const errors: FieldErrors = {};
  const destination = checkDestinationUrl(dto.destination_url, outbound);
  if (!destination.ok) {
    errors.destination_url = [`is not allowed: ${destination.reason}`];
  }
  const configuration = checkConfiguration(dto.configuration ?? null, errors);
  if (Object.keys(errors).length > 0) {
    throw ApiError.validation(errors);
  }
  const compileErrors: FieldErrors = {};
  for (const field of ['request_transform', 'response_transform'] as const) {
    const code = dto[field]?.code;
    const error = code === undefined ? null : compileErrorOf(code);
    if (error !== null) {
      compileErrors[`${field}.code`] = [`${error.message} (line ${error.line}, column ${error.column})`];
    }
  }
  if (Object.keys(compileErrors).length > 0) {
    throw ApiError.unprocessable('The transform code does not compile.', compileErrors);
  }
  return {
    destinationUrl: dto.destination_url,
    requestTransformCode: codeOf(dto.request_transform),
    responseTransformCode: codeOf(dto.response_transform),
    configuration,
    requireAuth: dto.require_auth ?? true,
  };
}

function codeOf(transform: ProxyTransformDto | null | undefined): string | null {
  return transform?.code ?? null;
}

function checkConfiguration(
  value: Record<string, unknown> | null,
  errors: FieldErrors,
): Record<string, string> | null {
  if (value === null) {
    return null;
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_CONFIGURATION_ENTRIES) {
    errors.configuration = [`may hold at most ${MAX_CONFIGURATION_ENTRIES} entries`];
    return null;
  }
  const checked: Record<string, string> = {};
  for (const [name, item] of entries) {
    if (name.length === 0 || name.length > MAX_CONFIGURATION_NAME) {
      errors.configuration = [`names must have 1 to ${MAX_CONFIGURATION_NAME} characters`];
      continue;
    }
    const path = `configuration.${name.replace(/[^\x20-\x7e]/g, '?')}`;
    if (typeof item !== 'string') {
      errors[path] = ['must be a string'];
    } else if (item.length > MAX_CONFIGURATION_VALUE) {
      errors[path] = [`must be at most ${MAX_CONFIGURATION_VALUE} characters`];
    } else {
      Object.defineProperty(checked, name, {
        value: item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return checked;
}
