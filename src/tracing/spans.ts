/**
 * The vault's own spans (sandbox runs, webhook deliveries) and the trace ids of log lines. Without
 * OTEL_EXPORTER_OTLP_ENDPOINT nothing here does any work and no OpenTelemetry module is loaded: the SDK
 * (sdk.ts, loaded by start.ts only when traces are on) installs the implementation.
 */

/** What a span's code may add: attributes the vault names (`token_vault.*`), never a value from a request. */
export interface SpanHandle {
  setAttribute(key: `token_vault.${string}`, value: string | number | boolean): void;
  /** Marks the span as failed (status ERROR), with no message. */
  fail(): void;
}

export interface Tracing {
  inSpan<T>(name: string, fn: (span: SpanHandle) => Promise<T>): Promise<T>;
  /** A new trace (a job's own, not a child of whatever is current), linked to the span `origin` names. */
  inLinkedSpan<T>(name: string, origin: string | null, fn: (span: SpanHandle) => Promise<T>): Promise<T>;
  /** The current span as a W3C `traceparent` (built from its ids, nothing else), if it is recorded. */
  traceparent(): string | null;
  /** `fn` run in the current span's context wherever it is called from (a worker's message, a timer). */
  bind<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  /** `trace_id` and `span_id` of the current span, if any. */
  logFields(): Record<string, string>;
  /** Exports the spans not yet sent (at shutdown). */
  flush(): Promise<void>;
}

const NO_SPAN: SpanHandle = { setAttribute: () => undefined, fail: () => undefined };

let active: Tracing | null = null;

/** Called once by the SDK when traces are on. */
export function installTracing(tracing: Tracing): void {
  active = tracing;
}

export function tracingOn(): boolean {
  return active !== null;
}

/** Runs `fn` in a new span (a child of the current one); without traces, just runs it. */
export function inSpan<T>(name: string, fn: (span: SpanHandle) => Promise<T>): Promise<T> {
  return active === null ? fn(NO_SPAN) : active.inSpan(name, fn);
}

/**
 * Runs `fn` in the span of a job that an earlier span caused (a webhook delivery of a request's event): a
 * new trace, linked to `origin` (the `traceparent` currentTraceparent gave then) when there is one. Without
 * traces, just runs it.
 */
export function inLinkedSpan<T>(
  name: string,
  origin: string | null,
  fn: (span: SpanHandle) => Promise<T>,
): Promise<T> {
  return active === null ? fn(NO_SPAN) : active.inLinkedSpan(name, origin, fn);
}

/** The current span as a `traceparent` to store with work done later; null without traces or a span. */
export function currentTraceparent(): string | null {
  return active === null ? null : active.traceparent();
}

export function bindToCurrentSpan<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  return active === null ? fn : active.bind(fn);
}

/** The pino mixin adding trace and span ids to each line; undefined (no mixin) without traces. */
export function traceLogMixin(): (() => Record<string, string>) | undefined {
  const tracing = active;
  return tracing === null ? undefined : () => tracing.logFields();
}

export function flushTracing(): Promise<void> {
  return active === null ? Promise.resolve() : active.flush();
}
