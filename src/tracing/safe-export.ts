import type { Attributes } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter, TimedEvent } from '@opentelemetry/sdk-trace';

/**
 * The span attributes that may leave the vault: an allow-list, so an attribute a future instrumentation adds
 * is dropped until someone decides it is safe. Left out on purpose: `url.full`, `url.path` and `url.query`
 * (a token id in `/tokens/<id>` can be derived from card data, query strings carry list filters and proxy
 * keys, and a destination's URL may carry its credentials); captured headers; statement parameters. The
 * route template (`http.route`, and the server span's name) says which endpoint was called.
 */
const ALLOWED = new Set([
  // HTTP, server and client (stable semantic conventions)
  'http.request.method',
  'http.request.method_original',
  'http.response.status_code',
  'http.route',
  'url.scheme',
  'server.address',
  'server.port',
  'client.address',
  'network.peer.address',
  'network.peer.port',
  'network.protocol.version',
  'user_agent.original',
  'error.type',
  // PostgreSQL: the statement text has placeholders only (every value is a parameter); no parameter values.
  'db.system.name',
  'db.namespace',
  'db.operation.name',
  'db.collection.name',
  'db.query.text',
  'db.response.status_code',
]);

/** The vault's own attributes (src/tracing/spans.ts: names, counts and outcomes, never request content). */
const OWN_PREFIX = 'token_vault.';

function allowed(attributes: Attributes): Attributes {
  const kept: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (ALLOWED.has(key) || key.startsWith(OWN_PREFIX)) {
      kept[key] = value;
    }
  }
  return kept;
}

/** An exception event keeps its type: a message can quote what failed (a value a statement was given). */
function safeEvent(event: TimedEvent): TimedEvent {
  const type = event.attributes?.['exception.type'];
  return {
    name: event.name,
    time: event.time,
    attributes: event.name === 'exception' && type !== undefined ? { 'exception.type': type } : {},
    droppedAttributesCount: 0,
  };
}

/** A copy of the span with only allowed attributes, events without their attributes' text, no status message. */
export function safeSpan(span: ReadableSpan): ReadableSpan {
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanContext: span.parentSpanContext,
    startTime: span.startTime,
    endTime: span.endTime,
    status: { code: span.status.code },
    attributes: allowed(span.attributes),
    links: span.links.map((link) => ({ context: link.context })),
    events: span.events.map(safeEvent),
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: 0,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

/** Hands the exporter safe copies of the spans (see ALLOWED): the last step before anything leaves. */
export class SafeSpanExporter implements SpanExporter {
  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.inner.export(spans.map(safeSpan), resultCallback);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
