/**
 * Imported first by main.ts: with an OTLP endpoint set, starts the OpenTelemetry SDK before http, express
 * and pg are required (its instrumentations patch them as they load). Without one, loads nothing more.
 */
import { loadTracingConfig, TracingConfigError } from '../config/tracing-config';
import type * as Sdk from './sdk';

function start(): void {
  let config;
  try {
    config = loadTracingConfig();
  } catch (err) {
    if (err instanceof TracingConfigError) {
      process.stderr.write(`Configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  if (config !== null) {
    // Required here, not imported: without traces the SDK is never loaded.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    (require('./sdk') as typeof Sdk).startTracing(config);
  }
}

start();
