/**
 * OpenTelemetry traces (src/tracing/): on when an OTLP endpoint is set, off (nothing loaded) otherwise. Read
 * before anything else loads, apart from the application's configuration, because the SDK must be started
 * before http, express and pg are required. The exporter reads its own OTEL_EXPORTER_OTLP_* settings
 * (headers, timeout, compression, certificates); this file decides only whether and how to sample.
 */
export type TraceSampler =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

export interface TracingConfig {
  /** OTEL_SERVICE_NAME, default `token-vault`. */
  serviceName: string;
  /** OTEL_TRACES_SAMPLER, default `parentbased_always_on` (the specification's default). */
  sampler: TraceSampler;
  /** OTEL_TRACES_SAMPLER_ARG for the ratio samplers: 0 to 1, default 1. */
  ratio: number;
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
  return { serviceName: setting(env, 'OTEL_SERVICE_NAME') ?? 'token-vault', sampler, ratio };
}
