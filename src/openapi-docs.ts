import type { OpenAPIObject } from '@nestjs/swagger';
import { BodyMethod, REQUEST_EXAMPLES, RequestExamples } from './openapi-examples';

type Operation = {
  summary?: string;
  description?: string;
  parameters?: { in: string; name?: string }[];
  requestBody?: { content: Record<string, { schema?: { $ref?: string }; examples?: unknown }> };
  responses: Record<string, { description: string; content?: unknown; headers?: Record<string, unknown> }>;
  security?: unknown[];
};

/**
 * Error answers by what an operation does, and the 4xx it declares itself (409, 422); every one is a
 * problem-details body.
 */
function errorStatuses(path: string, method: string, op: Operation): number[] {
  const statuses = new Set<number>();
  if ((op.security ?? []).length > 0) {
    statuses.add(401).add(403).add(429);
  }
  if (path.includes('{id}')) {
    statuses.add(400).add(404);
  }
  if (op.requestBody !== undefined) {
    statuses.add(400).add(413).add(415);
  }
  if (takesIdempotencyKey(path, method, op)) {
    statuses.add(409).add(422);
  }
  for (const status of Object.keys(op.responses).map(Number)) {
    if (status >= 400 && status < 500) {
      statuses.add(status);
    }
  }
  return [...statuses];
}

const ERROR_TEXT: Record<number, string> = {
  400: 'Validation failed; `errors` lists the request paths.',
  401: 'Missing or invalid BT-API-KEY.',
  403: 'A permission or an access rule is missing.',
  404: 'Not found (also for another tenant’s resource).',
  409: 'Conflict (a duplicate id, a resource in use, or a request with the same BT-IDEMPOTENCY-KEY still running).',
  422: 'The BT-IDEMPOTENCY-KEY was used for a request with another method, path or body.',
  413: 'The body is larger than 1 MB.',
  415: 'The body is not JSON (or, for PATCH /tokens/{id}, not a JSON merge patch).',
  429: 'A rate limit is reached (the application’s, the tenant’s, or the address’s without a valid key): retry after `Retry-After` seconds.',
};

/** The rate-limit fields (draft-ietf-httpapi-ratelimit-headers-10), on the answers of rate-limited routes. */
const RATE_LIMIT_HEADERS = {
  RateLimit: {
    description:
      'The caller’s own limit’s remaining quota `r` and seconds to its reset `t` (and, on a 429, the limit that refused).',
    schema: { type: 'string', example: '"application";r=1999;t=10' },
  },
  'RateLimit-Policy': {
    description: 'Each limit’s quota `q` per window of `w` seconds.',
    schema: { type: 'string', example: '"application";q=2000;w=10' },
  },
};
const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', example: 7 } },
};

/** What each error answer looks like, shown under its status in /docs (not one 400 example for all). */
const PROBLEM_EXAMPLES: Record<number, object> = {
  400: problemExample(400, 'Bad Request', 'One or more validation errors occurred.', {
    'data.number': ['must pass the Luhn check'],
  }),
  401: problemExample(401, 'Unauthorized', 'The BT-API-KEY is not valid.'),
  403: problemExample(403, 'Forbidden', 'The application lacks the permission token:create.'),
  404: problemExample(404, 'Not Found', 'Token not found.'),
  409: problemExample(409, 'Conflict', 'A token with this id exists already.'),
  413: problemExample(413, 'Content Too Large', 'The request body is larger than 1 MB.'),
  415: problemExample(
    415,
    'Unsupported Media Type',
    'The body must be JSON (Content-Type: application/json).',
  ),
  422: problemExample(422, 'Unprocessable Content', 'The code does not compile.', {
    code: ['SyntaxError: Unexpected token (3:7)'],
  }),
  429: problemExample(
    429,
    'Too Many Requests',
    'Rate limit reached for this application: at most 2000 in 10 seconds. Try again in 7 seconds.',
  ),
};

function problemExample(status: number, title: string, detail: string, errors?: object): object {
  return {
    type: `https://www.rfc-editor.org/rfc/rfc9110#status.${status}`,
    title,
    status,
    detail,
    ...(errors === undefined ? {} : { errors }),
  };
}

const PROBLEM_SCHEMA = {
  type: 'object',
  required: ['type', 'title', 'status'],
  properties: {
    type: { type: 'string', example: 'https://www.rfc-editor.org/rfc/rfc9110#status.400' },
    title: { type: 'string', example: 'Bad Request' },
    status: { type: 'integer', example: 400 },
    detail: { type: 'string', example: 'One or more validation errors occurred.' },
    errors: {
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string' } },
      example: { 'data.number': ['must pass the Luhn check'] },
    },
  },
};

/** The proxy's own errors (spec §4.5 rule 5): the problem details wrapped in `proxy_error`. */
const PROXY_ERROR_SCHEMA = {
  type: 'object',
  required: ['proxy_error'],
  properties: { proxy_error: { $ref: '#/components/schemas/ProblemDetails' } },
};

/** /proxy declares its own error bodies (`proxy_error`); the common ones are not added to it. */
function declaresErrorBodies(op: Operation): boolean {
  return Object.entries(op.responses).some(([status, r]) => Number(status) >= 400 && r.content !== undefined);
}

/** The DTO a request body is an instance of, by its schema reference. */
function bodyDto(op: Operation): string | undefined {
  const media = Object.values(op.requestBody?.content ?? {})[0];
  return media?.schema?.$ref?.replace('#/components/schemas/', '');
}

/** POST, PUT and PATCH of an authenticated route, and /proxy: where BT-IDEMPOTENCY-KEY applies. */
function takesIdempotencyKey(path: string, method: string, op: Operation): boolean {
  return (
    ['post', 'put', 'patch'].includes(method) && ((op.security ?? []).length > 0 || path.startsWith('/proxy'))
  );
}

const IDEMPOTENCY_PARAMETER = {
  name: 'BT-IDEMPOTENCY-KEY',
  in: 'header',
  required: false,
  // No example: "Try it out" would prefill it, and every second write from /docs would then answer 422.
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  description:
    'A value of your own, new for each operation (e.g. a UUID); leave it empty in /docs unless you are ' +
    'trying a retry. Makes a retry safe: the first successful answer to a request with this key is replayed byte for byte, ' +
    'with `Idempotent-Replayed: true`, to any retry with the same key, method, path and body by the same ' +
    'application (and, on /proxy, destination) for 24 hours. The same key with another request is a 422; ' +
    'while the first still runs, a 409. Failed requests are not kept. Answers that reveal token data are ' +
    'never replayed unchecked: a retry of detokenize or a search runs again under the current rules; a retry ' +
    'of react gets the kept answer without running the code again, only after the reactor, the tokens and ' +
    'the access rules are checked as today and the replay is audited (else their current error). Refused ' +
    '(400) with a public key and on a proxy with require_auth false, whose answers are not kept.',
};

/**
 * Completes the generated document for people using /docs: the error answers each operation can give
 * (problem details), a description where an operation has only a summary, and the working examples of
 * each request body. The operations' own text is on their controllers' decorators.
 */
export function completeDocument(
  document: OpenAPIObject,
  requestExamples: RequestExamples = REQUEST_EXAMPLES,
): OpenAPIObject {
  document.components = document.components ?? {};
  document.components.schemas = {
    ...(document.components.schemas ?? {}),
    ProblemDetails: PROBLEM_SCHEMA,
    ProxyError: PROXY_ERROR_SCHEMA,
  };
  const unused = new Set(
    Object.entries(requestExamples).flatMap(([dto, byMethod]) =>
      Object.keys(byMethod).map((m) => `${m} ${dto}`),
    ),
  );
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(methods as Record<string, Operation>)) {
      op.description ??= op.summary;
      const dto = bodyDto(op);
      const examples = dto === undefined ? undefined : requestExamples[dto]?.[method as BodyMethod];
      if (examples !== undefined && op.requestBody !== undefined) {
        for (const media of Object.values(op.requestBody.content)) {
          media.examples = examples;
        }
        unused.delete(`${method} ${dto}`);
      }
      if (takesIdempotencyKey(path, method, op)) {
        op.parameters = [...(op.parameters ?? []), IDEMPOTENCY_PARAMETER];
      }
      if ((op.security ?? []).length > 0) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (status.startsWith('2')) {
            response.headers = { ...response.headers, ...RATE_LIMIT_HEADERS };
          }
        }
      }
      if (declaresErrorBodies(op)) {
        continue;
      }
      for (const status of errorStatuses(path, method, op)) {
        const description = op.responses[String(status)]?.description || ERROR_TEXT[status];
        if (!description) {
          throw new Error(`${method.toUpperCase()} ${path}: the ${status} answer needs a description`);
        }
        const example = PROBLEM_EXAMPLES[status];
        op.responses[String(status)] = {
          description,
          ...(status === 429 ? { headers: { ...RETRY_AFTER, ...RATE_LIMIT_HEADERS } } : {}),
          content: {
            'application/problem+json': {
              schema: { $ref: '#/components/schemas/ProblemDetails' },
              ...(example === undefined ? {} : { example }),
            },
          },
        };
      }
    }
  }
  if (unused.size > 0) {
    throw new Error(`openapi-examples.ts: no request body for ${[...unused].join(', ')}`);
  }
  return document;
}
