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

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Token Vault API')
    .setDescription(EXPLORER_DESCRIPTION)
    .setVersion('1')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'BT-API-KEY' }, API_KEY_SCHEME)
    .build();
  return completeDocument(
    SwaggerModule.createDocument(app, config, {
      operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
    }),
  );
}

export function serveOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    customSiteTitle: 'Token Vault API',
    // The entered key lives in the page's memory only: never in localStorage, where any script that ever
    // ran on this origin could read it (README, Security notes).
    swaggerOptions: { persistAuthorization: false },
  });
}
