import { ApiError, FieldErrors } from '../common/api-error';
import { checkDestinationUrl, StaticCheckOptions } from '../outbound';
import { compileErrorOf } from '../sandbox/compile-check';
import { checkStringMap } from '../sandbox/sandbox-configuration';
import type { ProxyBodyDto, ProxyTransformDto } from './dto/proxy.dto';
import type { StoredTransform } from './dto/proxy-transform.dto';
import { checkTransformList } from './proxy-transform-rules';
import type { ParseExpression } from './tokenize-transform-rules';

export interface CheckedProxy {
  destinationUrl: string;
  requestTransformCode: string | null;
  responseTransformCode: string | null;
  requestTransforms: StoredTransform[] | null;
  responseTransforms: StoredTransform[] | null;
  configuration: Record<string, string> | null;
  requireAuth: boolean;
  disableDetokenization: boolean;
}

/**
 * The rules of a proxy body the DTO cannot state: the destination passes the outbound guard's static
 * checks, configuration is a flat map of strings, and transform code compiles (422, like formula code).
 */
export function checkProxyBody(
  dto: ProxyBodyDto,
  outbound: StaticCheckOptions,
  parse: ParseExpression,
): CheckedProxy {
  const errors: FieldErrors = {};
  // A merge patch can remove what the DTO of a full body requires.
  if (typeof dto.name !== 'string') {
    errors.name = ['is required'];
  }
  if (typeof dto.destination_url !== 'string') {
    errors.destination_url = ['is required'];
  } else {
    const destination = checkDestinationUrl(dto.destination_url, outbound);
    if (!destination.ok) {
      errors.destination_url = [`is not allowed: ${destination.reason}`];
    }
  }
  for (const field of ['request_transform', 'response_transform'] as const) {
    const transform = dto[field];
    if (transform !== undefined && transform !== null && typeof transform.code !== 'string') {
      errors[`${field}.code`] = ['is required'];
    }
  }
  const compileErrors: FieldErrors = {};
  const lists = {
    request: checkTransformList('request', dto.request_transforms, errors, compileErrors, parse),
    response: checkTransformList('response', dto.response_transforms, errors, compileErrors, parse),
  };
  const tokenizes = [...(lists.request ?? []), ...(lists.response ?? [])].some((t) => t.type === 'tokenize');
  // The created tokens belong to the proxy's application: without one there is nobody to create them.
  if (tokenizes && typeof dto.application?.id !== 'string') {
    errors.application = ['is required when a tokenize transform is listed (it creates the tokens)'];
  }
  for (const side of ['request', 'response'] as const) {
    if (lists[side] !== null && dto[`${side}_transform`] !== undefined && dto[`${side}_transform`] !== null) {
      errors[`${side}_transforms`] = [`cannot be sent with ${side}_transform`];
    }
  }
  const configuration = checkStringMap(dto.configuration ?? null, errors);
  if (Object.keys(errors).length > 0) {
    throw ApiError.validation(errors);
  }
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
    requestTransforms: lists.request,
    responseTransforms: lists.response,
    configuration,
    requireAuth: dto.require_auth ?? true,
    disableDetokenization: dto.disable_detokenization ?? false,
  };
}

function codeOf(transform: ProxyTransformDto | null | undefined): string | null {
  return transform?.code ?? null;
}
