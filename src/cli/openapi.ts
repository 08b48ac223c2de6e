import { writeFileSync } from 'node:fs';
import { createApp } from '../app';
import { loadConfig } from '../config/app-config';
import { buildOpenApiDocument } from '../openapi';
import { Command, out, UsageError } from './kit';

/** Writes the OpenAPI document from the running code on an in-memory database (nothing else is opened). */
export const openapiCommand: Command = {
  usage: 'openapi [file]',
  summary: 'Write the OpenAPI document of this build (default openapi.json; `npm run openapi` commits it).',
  run: async (args) => {
    if (args.length > 1 || args[0]?.startsWith('-') === true) {
      throw new UsageError('give at most one output file');
    }
    const file = args[0] ?? 'openapi.json';
    const config = loadConfig({
      ...process.env,
      DATABASE_URL: undefined,
      LOG_LEVEL: 'silent',
      MIGRATIONS_RUN: 'false',
    });
    const { app, close } = await createApp(config, { inMemoryDatabase: true, docs: false });
    try {
      writeFileSync(file, `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`);
    } finally {
      await close();
    }
    out(`Wrote ${file}.`);
  },
};
