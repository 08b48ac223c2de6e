import { loadTracingConfig } from './tracing-config';

describe('loadTracingConfig', () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

  it('is off without an OTLP endpoint, or with OTEL_SDK_DISABLED=true', () => {
    expect(loadTracingConfig({})).toBeNull();
    expect(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBeNull();
    expect(loadTracingConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' })).toBeNull();
  });

  it('is on with either endpoint, with the specification’s defaults', () => {
    const defaults = { serviceName: 'token-vault', sampler: 'parentbased_always_on', ratio: 1 };
    expect(loadTracingConfig(endpoint)).toEqual(defaults);
    expect(loadTracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://c/v1/traces' })).toEqual(
      defaults,
    );
  });

  it('reads the service name and the sampler', () => {
    expect(
      loadTracingConfig({
        ...endpoint,
        OTEL_SERVICE_NAME: 'vault-eu',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      }),
    ).toEqual({ serviceName: 'vault-eu', sampler: 'parentbased_traceidratio', ratio: 0.25 });
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /OTEL_EXPORTER_OTLP_ENDPOINT must be an http/],
    [{ ...endpoint, OTEL_TRACES_SAMPLER: 'jaeger_remote' }, /OTEL_TRACES_SAMPLER must be one of/],
    [{ ...endpoint, OTEL_TRACES_SAMPLER_ARG: '1.5' }, /OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/],
  ])('refuses %j', (env, message) => {
    expect(() => loadTracingConfig(env)).toThrow(message);
  });
});
