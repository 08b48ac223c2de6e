import {
  context,
  diag,
  DiagLogLevel,
  propagation,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Link,
  type Span,
  type TextMapPropagator,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
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
import { formatTraceparent, parseTraceparent } from './traceparent';

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

/** `fn` in `span`, which ends with it, failed (status ERROR, no message) when `fn` throws. */
async function within<T>(span: Span, fn: (span: SpanHandle) => Promise<T>): Promise<T> {
  try {
    return await fn({
      setAttribute: (key, value) => void span.setAttribute(key, value),
      fail: () => void span.setStatus({ code: SpanStatusCode.ERROR }),
    });
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}

/** OTEL_PROPAGATORS: none leaves the API's no-op propagator (nothing read from requests or sent on). */
function propagator(config: TracingConfig): TextMapPropagator | null {
  const chosen = config.propagators.map((name) =>
    name === 'tracecontext' ? new W3CTraceContextPropagator() : new W3CBaggagePropagator(),
  );
  return chosen.length === 0 ? null : new CompositePropagator({ propagators: chosen });
}

/** The link to a stored `traceparent`'s span; none for a value that is not one. */
function linkTo(origin: string | null): Link[] {
  const ids = origin === null ? null : parseTraceparent(origin);
  return ids === null ? [] : [{ context: { ...ids, isRemote: true } }];
}

/** Boot warnings (an OTEL_PROPAGATORS entry ignored) as JSON lines on stderr, like the export problems. */
function warnIgnored(config: TracingConfig): void {
  config.warnings.forEach((message) => diag.warn(message));
}

/**
 * Starts the SDK: W3C trace context in and out, spans of HTTP requests (server and the outbound client),
 * Express routes (for the route template only: no middleware spans) and pg statements (inside a traced
 * operation only, without connection spans or parameter values), sent by OTLP/HTTP in batches through
 * SafeSpanExporter. Must run before http, express and pg are first required (start.ts).
 */
export function startTracing(config: TracingConfig): void {
  reportExportProblems();
  warnIgnored(config);
  const provider = new TracerProvider({
    sampler: sampler(config),
    resource: defaultResource().merge(
      resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName }),
    ),
    spanLimits: { attributeValueLengthLimit: MAX_ATTRIBUTE_LENGTH },
    spanProcessors: [
      new BatchSpanProcessor({ exporter: new SafeSpanExporter(new OTLPTraceExporter()), ...config.batch }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const chosen = propagator(config);
  if (chosen !== null) {
    propagation.setGlobalPropagator(chosen);
  }
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
    inSpan: (name, fn) => tracer.startActiveSpan(name, (span) => within(span, fn)),
    // Linked, not a child: the OpenTelemetry guidance for work a request only queued (a span may end
    // long before the job runs, and one request's events fan out to several deliveries).
    inLinkedSpan: (name, origin, fn) =>
      tracer.startActiveSpan(name, { root: true, links: linkTo(origin) }, (span) => within(span, fn)),
    traceparent: () => {
      const current = trace.getSpan(context.active())?.spanContext();
      // Only a recorded span: a link to one that was never exported would lead nowhere.
      return current === undefined ||
        !trace.isSpanContextValid(current) ||
        (current.traceFlags & TraceFlags.SAMPLED) === 0
        ? null
        : formatTraceparent(current);
    },
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
