import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as received over OTLP/HTTP JSON, attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client. */
  kind: number;
  statusCode: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  /** The spans this one links to (another trace's, for a webhook delivery). */
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  url: string;
  spans: ReceivedSpan[];
  /** Every request body as received, for searches over everything that left the vault. */
  bodies: string[];
  close(): Promise<void>;
}

interface OtlpKeyValue {
  key: string;
  value: Record<string, unknown>;
}

function plain(attributes: OtlpKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, Object.values(value)[0]]));
}

/** An OTLP/HTTP collector on 127.0.0.1 accepting JSON `POST /v1/traces`, keeping what it receives. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        !/json/.test(req.headers['content-type'] ?? '')
      ) {
        res.writeHead(404).end();
        return;
      }
      bodies.push(body);
      const parsed = JSON.parse(body) as {
        resourceSpans: {
          resource?: { attributes?: OtlpKeyValue[] };
          scopeSpans: {
            spans: {
              traceId: string;
              spanId: string;
              parentSpanId?: string;
              name: string;
              kind: number;
              status?: { code?: number };
              attributes?: OtlpKeyValue[];
              events?: { name: string; attributes?: OtlpKeyValue[] }[];
              links?: { traceId: string; spanId: string; attributes?: OtlpKeyValue[] }[];
            }[];
          }[];
        }[];
      };
      for (const resourceSpans of parsed.resourceSpans) {
        const resource = plain(resourceSpans.resource?.attributes);
        for (const span of resourceSpans.scopeSpans.flatMap((scope) => scope.spans)) {
          spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            statusCode: span.status?.code ?? 0,
            attributes: plain(span.attributes),
            events: (span.events ?? []).map((e) => ({ name: e.name, attributes: plain(e.attributes) })),
            links: (span.links ?? []).map((l) => ({
              traceId: l.traceId,
              spanId: l.spanId,
              attributes: plain(l.attributes),
            })),
            resource,
          });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
