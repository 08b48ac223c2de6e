import type { OpenAPIObject } from '@nestjs/swagger';
import { OPERATION_EXAMPLES } from './openapi-examples';

type Operation = {
  summary?: string;
  description?: string;
  parameters?: { in: string }[];
  requestBody?: { content: Record<string, { schema?: unknown; examples?: unknown }> };
  responses: Record<string, { description: string; content?: unknown }>;
  security?: unknown[];
};

/** Summary and description of operations whose controllers do not set them. */
const DESCRIBED: Record<string, [string, string]> = {
  'POST /applications': ['Create an application', 'Management only. The answer carries the API key, once.'],
  'GET /applications': ['List applications', 'Filter by `id` and `type` (both repeatable).'],
  'GET /applications/key': ['The calling application', 'The application the BT-API-KEY belongs to.'],
  'GET /applications/{id}': ['Get an application', 'Never includes its key.'],
  'PUT /applications/{id}': [
    'Replace an application',
    'Name, permissions and access rules. Once an application has rules, they govern all of its token access.',
  ],
  'DELETE /applications/{id}': ['Delete an application', 'Its key stops working at once.'],
  'POST /applications/{id}/regenerate': [
    'Regenerate the key',
    'Answers with the new key; the old one stops working.',
  ],
  'GET /permissions': ['List permissions', 'Every permission and the application types that may hold it.'],
  'GET /health': ['Liveness', 'The process is up. No key needed.'],
  'GET /health/live': [
    'Liveness probe',
    'The process serves requests: 200 until shutdown begins, then 503. Nothing else is checked. No key needed.',
  ],
  'GET /health/ready': [
    'Readiness probe',
    'The database answers, migrations are applied, the master keys are loaded and the sandbox is up: 200 listing them, or 503 naming the failing parts in `errors`. No key needed.',
  ],
  'POST /tokens': [
    'Create a token',
    'Card, bank or any JSON. The answer masks the data; defaults per type fill mask, containers and fingerprint.',
  ],
  'GET /tokens': [
    'List tokens',
    'Newest first. Filter by `id`, `type` (repeatable) and `metadata.<key>=<value>` (case-insensitive, ANDed).',
  ],
  'POST /tokens/search': [
    'Search tokens',
    'Terms `data:<indexed value>`, `id:<id>`, `type:<type>`, `metadata.<key>:<value>`, ANDed.',
  ],
  'GET /tokens/{id}': [
    'Get a token',
    "Data as the application's access rules show it: revealed, masked or absent.",
  ],
  'PATCH /tokens/{id}': [
    'Update a token',
    'Content-Type application/merge-patch+json (RFC 7386): data, mask and metadata merge, other fields replace.',
  ],
  'DELETE /tokens/{id}': ['Delete a token', 'Its data is removed; a tombstone remains for audit.'],
  'POST /tokenize': [
    'Tokenize a JSON document',
    'Objects with type and data become tokens (answered masked), other string, number and boolean leaves token ids. All or nothing.',
  ],
};

/** Error answers by what an operation does; every one is a problem-details body. */
function errorStatuses(key: string, op: Operation): number[] {
  const statuses = new Set<number>();
  if ((op.security ?? []).length > 0) {
    statuses.add(401).add(403);
  }
  if (key.includes('{id}')) {
    statuses.add(400).add(404);
  }
  if (op.requestBody !== undefined) {
    statuses.add(400).add(413).add(415);
  }
  if (key === 'POST /tokens' || key === 'PATCH /tokens/{id}' || key === 'POST /tokenize') {
    statuses.add(409);
  }
  if (key.startsWith('DELETE /reactor-formulas')) {
    statuses.add(409);
  }
  if (/^(POST|PUT) \/(reactor-formulas|proxies)/.test(key)) {
    statuses.add(422);
  }
  return [...statuses];
}

const ERROR_TEXT: Record<number, string> = {
  400: 'Validation failed; `errors` lists the request paths.',
  401: 'Missing or invalid BT-API-KEY.',
  403: 'A permission or an access rule is missing.',
  404: 'Not found (also for another tenant’s resource).',
  409: 'Conflict (a duplicate id, or a resource in use).',
  413: 'The body is larger than 1 MB.',
  415: 'The body is not JSON (or, for PATCH /tokens/{id}, not a JSON merge patch).',
  422: 'The code does not compile (message with line and column).',
};

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

function isProxyPath(path: string): boolean {
  return path === '/proxy' || path.startsWith('/proxy/');
}

/** /proxy relays the destination's answers; its own failures are `{ proxy_error }` JSON bodies. */
function describeProxyErrors(op: Operation): void {
  for (const [status, response] of Object.entries(op.responses)) {
    if (Number(status) >= 400) {
      response.content = { 'application/json': { schema: { $ref: '#/components/schemas/ProxyError' } } };
    }
  }
}

/**
 * Completes the generated document for people using /docs: a summary and description per operation,
 * the error answers each can give (problem details), working examples, and the merge-patch media type.
 */
export function completeDocument(document: OpenAPIObject): OpenAPIObject {
  document.components = document.components ?? {};
  document.components.schemas = {
    ...(document.components.schemas ?? {}),
    ProblemDetails: PROBLEM_SCHEMA,
    ProxyError: PROXY_ERROR_SCHEMA,
  };
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, raw] of Object.entries(methods as Record<string, Operation>)) {
      const op = raw;
      const key = `${method.toUpperCase()} ${path}`;
      const described = DESCRIBED[key];
      if (described !== undefined) {
        op.summary ??= described[0];
        op.description ??= described[1];
      }
      op.summary ??= key;
      op.description ??= op.summary;
      if (key === 'PATCH /tokens/{id}' && op.requestBody !== undefined) {
        const content = op.requestBody.content['application/json'];
        op.requestBody.content = { 'application/merge-patch+json': content };
      }
      const examples = OPERATION_EXAMPLES[key];
      if (examples !== undefined && op.requestBody !== undefined) {
        for (const media of Object.values(op.requestBody.content)) {
          media.examples = examples;
        }
      }
      if (isProxyPath(path)) {
        describeProxyErrors(op);
        continue;
      }
      for (const status of errorStatuses(key, op)) {
        op.responses[String(status)] = {
          description: op.responses[String(status)]?.description ?? ERROR_TEXT[status],
          content: {
            'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' } },
          },
        };
      }
    }
  }
  return document;
}
