import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { SafeSpanExporter } from './safe-export';

describe('SafeSpanExporter', () => {
  it('passes allowed attributes and the vault’s own, and drops URLs, headers, messages and the rest', async () => {
    const inner = new InMemorySpanExporter();
    const provider = new TracerProvider({
      spanProcessors: [new SimpleSpanProcessor({ exporter: new SafeSpanExporter(inner) })],
    });
    const span = provider.getTracer('test').startSpan('GET /tokens/:id', {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': 'GET',
        'http.route': '/tokens/:id',
        'url.path': '/tokens/4242424242424242',
        'url.query': 'bt-proxy-key=secret',
        'url.full': 'https://user:pw@destination/x?key=secret',
        'http.request.header.authorization': ['Bearer secret'],
        'db.query.text': 'SELECT 1 WHERE id = $1',
        'db.postgresql.values': ['4242424242424242'],
        'token_vault.sandbox.outcome': 'ok',
      },
    });
    span.recordException(new Error('invalid input syntax: "4242424242424242"'));
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'value 4242424242424242 refused' });
    span.end();
    await provider.forceFlush();

    const [exported] = inner.getFinishedSpans();
    expect(exported.attributes).toEqual({
      'http.request.method': 'GET',
      'http.route': '/tokens/:id',
      'db.query.text': 'SELECT 1 WHERE id = $1',
      'token_vault.sandbox.outcome': 'ok',
    });
    expect(exported.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(exported.events.map((e) => [e.name, e.attributes])).toEqual([
      ['exception', { 'exception.type': 'Error' }],
    ]);
    expect(exported.spanContext()).toEqual(span.spanContext());
    // The whole card number: a shorter run such as "4242" turns up in the span's nanosecond timestamps now and then.
    expect(JSON.stringify(exported)).not.toMatch(/4242424242424242|secret|user:pw/);
  });
});
