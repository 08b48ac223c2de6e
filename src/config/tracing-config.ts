/**
 * OpenTelemetry traces (src/tracing/): on when an OTLP endpoint is set, off (nothing loaded) otherwise. Read
 * before anything else loads, apart from the application's configuration, because the SDK must be started
 * before http, express and pg are required. The exporter reads its own OTEL_EXPORTER_OTLP_* settings
 * (headers, timeout, compression, certificates); this file reads the rest: the sampler, the propagators,
 * the batch span processor and the resource.
 */
export type TraceSampler =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

/** The propagators this vault has (W3C trace context and W3C baggage). */
export type TracePropagator = 'tracecontext' | 'baggage';

/** OTEL_BSP_*: how finished spans are batched for the exporter (the specification's defaults). */
export interface BatchSettings {
  /** OTEL_BSP_SCHEDULE_DELAY, ms between two exports, default 5000. */
  scheduledDelayMillis: number;
  /** OTEL_BSP_EXPORT_TIMEOUT, ms an export may take, default 30000. */
  exportTimeoutMillis: number;
  /** OTEL_BSP_MAX_QUEUE_SIZE, spans kept waiting before more are dropped, default 2048. */
  maxQueueSize: number;
  /** OTEL_BSP_MAX_EXPORT_BATCH_SIZE, spans in one export, default 512, at most the queue size. */
  maxExportBatchSize: number;
}

export interface TracingConfig {
  /** OTEL_SERVICE_NAME, else `service.name` of OTEL_RESOURCE_ATTRIBUTES, else `token-vault`. */
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded (`service.name` is serviceName). */
  resourceAttributes: Record<string, string>;
  /** OTEL_PROPAGATORS, default `tracecontext,baggage`; `none` for none. */
  propagators: TracePropagator[];
  batch: BatchSettings;
  /** OTEL_TRACES_SAMPLER, default `parentbased_always_on` (the specification's default). */
  sampler: TraceSampler;
  /** OTEL_TRACES_SAMPLER_ARG for the ratio samplers: 0 to 1, default 1. */
  ratio: number;
  /** What was ignored, for a warning at boot (an OTEL_PROPAGATORS entry this vault does not have). */
  warnings: string[];
}

export class TracingConfigError extends Error {}

type Env = Record<string, string | undefined>;

const SAMPLERS: readonly TraceSampler[] = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

function setting(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function endpoint(env: Env, name: string): string | undefined {
  const value = setting(env, name);
  if (value !== undefined && !/^https?:$/.test(URL.parse(value)?.protocol ?? '')) {
    throw new TracingConfigError(`${name} must be an http:// or https:// URL`);
  }
  return value;
}

/** An integer setting from `min` up to 2³¹ − 1 (the range the specification asks for). */
function integer(env: Env, name: string, fallback: number, min: number): number {
  const raw = setting(env, name);
  if (raw === undefined) {
    return fallback;
  }
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= 2 ** 31 - 1)) {
    throw new TracingConfigError(`${name} must be a whole number from ${min} to ${2 ** 31 - 1}`);
  }
  return value;
}

function batchSettings(env: Env): BatchSettings {
  const maxQueueSize = integer(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1);
  const maxExportBatchSize = integer(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', Math.min(512, maxQueueSize), 1);
  if (maxExportBatchSize > maxQueueSize) {
    throw new TracingConfigError(
      `OTEL_BSP_MAX_EXPORT_BATCH_SIZE must not be more than OTEL_BSP_MAX_QUEUE_SIZE (${maxQueueSize})`,
    );
  }
  return {
    scheduledDelayMillis: integer(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 0),
    exportTimeoutMillis: integer(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30000, 1),
    maxQueueSize,
    maxExportBatchSize,
  };
}

/**
 * OTEL_PROPAGATORS. An entry this vault does not have is ignored with a warning, as the specification asks
 * of an unrecognised value (b3, jaeger, xray, ottrace need packages the vault does not ship).
 */
function propagators(env: Env, warnings: string[]): TracePropagator[] {
  const raw = setting(env, 'OTEL_PROPAGATORS') ?? 'tracecontext,baggage';
  const names = [...new Set(raw.split(',').map((name) => name.trim().toLowerCase()))].filter((n) => n !== '');
  if (names.includes('none')) {
    if (names.length > 1) {
      warnings.push(`OTEL_PROPAGATORS is "${raw}": with none, the others are ignored (no propagator)`);
    }
    return [];
  }
  const known = names.filter(
    (name): name is TracePropagator => name === 'tracecontext' || name === 'baggage',
  );
  for (const name of names.filter((n) => !(known as string[]).includes(n))) {
    warnings.push(
      `OTEL_PROPAGATORS: "${name}" is not a propagator this vault has (tracecontext, baggage, none); ignored`,
    );
  }
  return known;
}

/**
 * OTEL_RESOURCE_ATTRIBUTES: `key=value` pairs separated by commas, `,` `=` and `%` percent-encoded. A
 * malformed list is refused, not dropped: the operator would otherwise look for attributes that never come.
 */
function resourceAttributes(env: Env): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of (setting(env, 'OTEL_RESOURCE_ATTRIBUTES') ?? '').split(',')) {
    if (pair.trim() === '') {
      continue;
    }
    const parts = pair.split('=');
    let key: string | undefined;
    let value: string | undefined;
    try {
      [key, value] = parts.map((part) => decodeURIComponent(part.trim()));
    } catch {
      key = undefined;
    }
    if (parts.length !== 2 || key === undefined || key === '' || value === undefined) {
      throw new TracingConfigError(
        'OTEL_RESOURCE_ATTRIBUTES must be key=value pairs separated by commas (percent-encode , = and %)',
      );
    }
    attributes[key] = value;
  }
  return attributes;
}

/** Null when traces are off: no OTLP endpoint, or OTEL_SDK_DISABLED=true. */
export function loadTracingConfig(env: Env = process.env): TracingConfig | null {
  const general = endpoint(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const traces = endpoint(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if ((general === undefined && traces === undefined) || setting(env, 'OTEL_SDK_DISABLED') === 'true') {
    return null;
  }
  const sampler = (setting(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on') as TraceSampler;
  if (!SAMPLERS.includes(sampler)) {
    throw new TracingConfigError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}`);
  }
  const rawRatio = setting(env, 'OTEL_TRACES_SAMPLER_ARG');
  const ratio = rawRatio === undefined ? 1 : Number(rawRatio);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    throw new TracingConfigError('OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1');
  }
  const { 'service.name': named, ...resource } = resourceAttributes(env);
  const warnings: string[] = [];
  return {
    serviceName: setting(env, 'OTEL_SERVICE_NAME') ?? (named === '' ? undefined : named) ?? 'token-vault',
    resourceAttributes: resource,
    propagators: propagators(env, warnings),
    batch: batchSettings(env),
    sampler,
    ratio,
    warnings,
  };
}
