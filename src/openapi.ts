import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { writeFileSync } from 'node:fs';
import { API_KEY_SCHEME } from './auth/decorators';
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

/** `npm run openapi`: writes the committed openapi.json from the running code (no database needed). */
async function main(): Promise<void> {
  const { createApp } = await import('./app');
  const { loadConfig } = await import('./config/app-config');
  const config = {
    ...loadConfig({ ...process.env, DATABASE_URL: undefined, LOG_LEVEL: 'silent', MIGRATIONS_RUN: 'false' }),
  };
  const { app, close } = await createApp(config, { inMemoryDatabase: true, docs: false });
  const document = buildOpenApiDocument(app);
  writeFileSync(process.argv[2] ?? 'openapi.json', `${JSON.stringify(document, null, 2)}\n`);
  await close();
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
