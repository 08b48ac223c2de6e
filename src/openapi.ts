import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { API_KEY_SCHEME } from './access/decorators';
import { completeDocument } from './openapi-docs';

/**
 * The explorer's front page: which key to authorize with. The management key printed at first start may
 * manage applications, members and proxies but holds no token permission, so token routes answer it 403.
 */
const EXPLORER_DESCRIPTION = [
  'Multi-tenant vault for sensitive data. Authenticate with the `BT-API-KEY` header (the **Authorize** button).',
  'Errors are problem-details objects.',
  '',
  '**Which key?** The management key printed when the vault first starts manages applications, members,',
  'proxies and reactors; it holds no token permission, so the token routes answer it with 403. To try them,',
  'authorize with the management key, call `POST /applications` with',
  '`{"name": "Backend", "type": "private", "permissions": ["token:create", "token:read", "token:search", "token:update", "token:delete", "token:use"]}`,',
  'then authorize again with the `key` of its answer (shown once).',
].join('\n');

/**
 * The explorer's reading order, by first path segment: applications (where a first session starts) to
 * webhooks. Routes are registered in another order (the hot ones first, see AppModule); a segment not
 * listed goes last. Within a segment the routes keep their order. Schemas are listed alphabetically.
 */
export const READING_ORDER = [
  'applications',
  'permissions',
  'tenants',
  'invitations',
  'health',
  'ping',
  'unseal',
  'logs',
  'tokens',
  'v2',
  'tokenize',
  'detokenize',
  'token-intents',
  'sessions',
  'keys',
  'documents',
  'reactor-formulas',
  'reactors',
  'proxies',
  'proxy',
  'webhooks',
];

function inReadingOrder(document: OpenAPIObject): OpenAPIObject {
  const rank = (path: string): number => {
    const at = READING_ORDER.indexOf(path.split('/')[1]);
    return at === -1 ? READING_ORDER.length : at;
  };
  const paths = Object.entries(document.paths).sort(([a], [b]) => rank(a) - rank(b));
  const schemas = Object.entries(document.components?.schemas ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return {
    ...document,
    paths: Object.fromEntries(paths),
    components: { ...document.components, schemas: Object.fromEntries(schemas) },
  };
}

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Token Vault API')
    .setDescription(EXPLORER_DESCRIPTION)
    .setVersion('1')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'BT-API-KEY' }, API_KEY_SCHEME)
    .build();
  return inReadingOrder(
    completeDocument(
      SwaggerModule.createDocument(app, config, {
        operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
      }),
    ),
  );
}

/**
 * The explorer at /docs and the document at /docs-json. The document is built on its first request, not at
 * boot: scanning every controller is most of the time a boot spends in Nest.
 */
export function serveOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    customSiteTitle: 'Token Vault API',
    // The entered key lives in the page's memory only: never in localStorage, where any script that ever
    // ran on this origin could read it (README, Security notes).
    swaggerOptions: { persistAuthorization: false },
  });
}
