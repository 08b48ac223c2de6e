import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { API_KEY_SCHEME } from './access/decorators';
import { completeDocument } from './openapi-docs';

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Token Vault API')
    .setDescription(
      'Multi-tenant vault for sensitive data. Authenticate with the `BT-API-KEY` header. Errors are problem-details objects.',
    )
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
