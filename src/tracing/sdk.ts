import {
  context,
  diag,
  DiagLogLevel,
  propagation,
  SpanStatusCode,
  trace,
  type Span,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import type { TracingConfig } from '../config/tracing-config';
import { SafeSpanExporter } from './safe-export';
import { installTracing, type SpanHandle } from './spans';

/** At shutdown the spans still waiting get this long to reach the collector. */
const SHUTDOWN_FLUSH_MS = 5000;
/** A statement longer than this is cut (a batch of many rows); no attribute is longer. */
const MAX_ATTRIBUTE_LENGTH = 4096;

function sampler(config: TracingConfig): Sampler {
  const root = (name: string): Sampler =>
    name.endsWith('always_on')
      ? new AlwaysOnSampler()
      : name.endsWith('always_off')
        ? new AlwaysOffSampler()
        : new TraceIdRatioBasedSampler(config.ratio);
  return config.sampler.startsWith('parentbased_')
    ? new ParentBasedSampler({ root: root(config.sampler) })
    : root(config.sampler);
}

/** Export failures (collector down, refused) as one JSON line on stderr, so a wrong endpoint is noticed. */
function reportExportProblems(): void {
  const line = (level: number) => (message: string) =>
    process.stderr.write(
      `${JSON.stringify({ level, time: Date.now(), context: 'OpenTelemetry', msg: message })}\n`,
    );
  diag.setLogger(
    {
      error: line(50),
      warn: line(40),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
}

function handle(span: Span): SpanHandle {
  return {
    setAttribute: (key, value) => void span.setAttribute(key, value),
    fail: () => void span.setStatus({ code: SpanStatusCode.ERROR }),
  };
}

/**
 * Starts the SDK: W3C trace context in and out, spans of HTTP requests (server and the outbound client),
 * Express routes (for the route template only: no middleware spans) and pg statements (inside a traced
 * operation only, without connection spans or parameter values), sent by OTLP/HTTP in batches through
 * SafeSpanExporter. Must run before http, express and pg are first required (start.ts).
 */
export function startTracing(config: TracingConfig): void {
  reportExportProblems();
  const provider = new TracerProvider({
    sampler: sampler(config),
    resource: defaultResource()
      .merge(detectResources({ detectors: [envDetector] }))
      .merge(resourceFromAttributes({ 'service.name': config.serviceName })),
    spanLimits: { attributeValueLengthLimit: MAX_ATTRIBUTE_LENGTH },
    spanProcessors: [new BatchSpanProcessor({ exporter: new SafeSpanExporter(new OTLPTraceExporter()) })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation(),
      new ExpressInstrumentation({
        ignoreLayersType: [
          ExpressLayerType.MIDDLEWARE,
          ExpressLayerType.ROUTER,
          ExpressLayerType.REQUEST_HANDLER,
        ],
      }),
      new PgInstrumentation({
        requireParentSpan: true,
        ignoreConnectSpans: true,
        enhancedDatabaseReporting: false,
      }),
    ],
  });
  const tracer = provider.getTracer('token-vault');
  installTracing({
    inSpan: (name, fn) =>
      tracer.startActiveSpan(name, async (span) => {
        try {
          return await fn(handle(span));
        } catch (err) {
          span.setStatus({ code: SpanStatusCode.ERROR });
          throw err;
        } finally {
          span.end();
        }
      }),
    bind: (fn) => context.bind(context.active(), fn),
    logFields: (): Record<string, string> => {
      const current = trace.getSpan(context.active())?.spanContext();
      return current === undefined || !trace.isSpanContextValid(current)
        ? {}
        : { trace_id: current.traceId, span_id: current.spanId };
    },
    // Never rejects: a collector that is down must not turn a clean shutdown into a failed one.
    flush: () =>
      provider
        .forceFlush({ timeoutMillis: SHUTDOWN_FLUSH_MS })
        .catch(() => diag.error('the spans still waiting could not be sent to the collector')),
  });
}
