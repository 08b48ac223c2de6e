import { loadTracingConfig } from './tracing-config';

describe('loadTracingConfig', () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
  const defaults = {
    serviceName: 'token-vault',
    resourceAttributes: {},
    propagators: ['tracecontext', 'baggage'],
    batch: {
      scheduledDelayMillis: 5000,
      exportTimeoutMillis: 30000,
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
    },
    sampler: 'parentbased_always_on',
    ratio: 1,
    warnings: [],
  };

  it('is off without an OTLP endpoint, or with OTEL_SDK_DISABLED=true', () => {
    expect(loadTracingConfig({})).toBeNull();
    expect(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBeNull();
    expect(loadTracingConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' })).toBeNull();
  });

  it('is on with either endpoint, with the specification’s defaults', () => {
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
    ).toMatchObject({ serviceName: 'vault-eu', sampler: 'parentbased_traceidratio', ratio: 0.25 });
  });

  it('reads the resource attributes, percent-decoded; OTEL_SERVICE_NAME wins over their service.name', () => {
    const attributes = 'deployment.environment.name=prod, team=pay%2Cments%3Dcards ,service.name=from-list';
    expect(loadTracingConfig({ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: attributes })).toMatchObject({
      serviceName: 'from-list',
      resourceAttributes: { 'deployment.environment.name': 'prod', team: 'pay,ments=cards' },
    });
    expect(
      loadTracingConfig({ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: attributes, OTEL_SERVICE_NAME: 'named' }),
    ).toMatchObject({ serviceName: 'named' });
  });

  it('reads the batch span processor’s settings', () => {
    expect(
      loadTracingConfig({
        ...endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '0',
        OTEL_BSP_EXPORT_TIMEOUT: '2000',
        OTEL_BSP_MAX_QUEUE_SIZE: '100',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '100',
      })?.batch,
    ).toEqual({
      scheduledDelayMillis: 0,
      exportTimeoutMillis: 2000,
      maxQueueSize: 100,
      maxExportBatchSize: 100,
    });
    // A queue smaller than the default batch: the batch defaults to the queue.
    expect(loadTracingConfig({ ...endpoint, OTEL_BSP_MAX_QUEUE_SIZE: '64' })?.batch.maxExportBatchSize).toBe(
      64,
    );
  });

  it.each([
    ['tracecontext', ['tracecontext'], []],
    [' Baggage , tracecontext,baggage', ['baggage', 'tracecontext'], []],
    ['none', [], []],
    ['b3,tracecontext', ['tracecontext'], [/"b3" is not a propagator this vault has/]],
    ['xray', [], [/"xray" is not a propagator/]],
    ['none,baggage', [], [/with none, the others are ignored/]],
  ])('OTEL_PROPAGATORS=%j: %j, an unknown one ignored with a warning', (value, propagators, warnings) => {
    const config = loadTracingConfig({ ...endpoint, OTEL_PROPAGATORS: value })!;
    expect(config.propagators).toEqual(propagators);
    expect(config.warnings).toEqual(warnings.map((w) => expect.stringMatching(w)));
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /^OTEL_EXPORTER_OTLP_ENDPOINT must be an http/],
    [{ ...endpoint, OTEL_TRACES_SAMPLER: 'jaeger_remote' }, /^OTEL_TRACES_SAMPLER must be one of/],
    [
      { ...endpoint, OTEL_TRACES_SAMPLER_ARG: '1.5' },
      /^OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/,
    ],
    [
      { ...endpoint, OTEL_BSP_SCHEDULE_DELAY: '5s' },
      /^OTEL_BSP_SCHEDULE_DELAY must be a whole number from 0 to/,
    ],
    [{ ...endpoint, OTEL_BSP_SCHEDULE_DELAY: '-1' }, /^OTEL_BSP_SCHEDULE_DELAY must be a whole number/],
    [
      { ...endpoint, OTEL_BSP_EXPORT_TIMEOUT: '0' },
      /^OTEL_BSP_EXPORT_TIMEOUT must be a whole number from 1 to/,
    ],
    [{ ...endpoint, OTEL_BSP_EXPORT_TIMEOUT: '1e4' }, /^OTEL_BSP_EXPORT_TIMEOUT must be a whole number/],
    [{ ...endpoint, OTEL_BSP_MAX_QUEUE_SIZE: '0' }, /^OTEL_BSP_MAX_QUEUE_SIZE must be a whole number from 1/],
    [
      { ...endpoint, OTEL_BSP_MAX_QUEUE_SIZE: '4294967296' },
      /^OTEL_BSP_MAX_QUEUE_SIZE must be a whole number/,
    ],
    [
      { ...endpoint, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2.5' },
      /^OTEL_BSP_MAX_EXPORT_BATCH_SIZE must be a whole/,
    ],
    [
      { ...endpoint, OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '200' },
      /^OTEL_BSP_MAX_EXPORT_BATCH_SIZE must not be more than OTEL_BSP_MAX_QUEUE_SIZE \(100\)$/,
    ],
    [{ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: 'team' }, /^OTEL_RESOURCE_ATTRIBUTES must be key=value pairs/],
    [{ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: 'a=b=c' }, /^OTEL_RESOURCE_ATTRIBUTES must be key=value pairs/],
    [{ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: '=b' }, /^OTEL_RESOURCE_ATTRIBUTES must be key=value pairs/],
    [{ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: 'a=%E0%A4%A' }, /^OTEL_RESOURCE_ATTRIBUTES must be key=value/],
  ])('refuses %j with one line naming the setting', (env, message) => {
    expect(() => loadTracingConfig(env)).toThrow(message);
    try {
      loadTracingConfig(env);
    } catch (err) {
      expect((err as Error).message).not.toContain('\n');
    }
  });
});
