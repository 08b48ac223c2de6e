import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SecureContextOptions, TLSSocket } from 'node:tls';
import type { TestCertificate } from './test-pki';

export type TestHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

export interface TestHttpsServer {
  server: Server;
  port: number;
  /** TCP connections accepted, whether or not the TLS handshake then succeeded. */
  readonly connections: number;
  /** HTTP requests received. */
  readonly requests: number;
  /** The SNI names the clients sent, one per completed handshake. */
  readonly servernames: (string | false | null)[];
  close(): Promise<void>;
}

/**
 * The default handler echoes the request: same body, `x-echo-method`, `x-echo-path`, and the headers it
 * received as JSON in `x-echo-headers`.
 */
export const echoHandler: TestHandler = (req, res, body) => {
  res.writeHead(200, {
    'content-type': req.headers['content-type'] ?? 'application/octet-stream',
    'x-echo-method': req.method,
    'x-echo-path': req.url,
    'x-echo-headers': JSON.stringify(req.headers),
  });
  res.end(body);
};

/**
 * An HTTPS server on 127.0.0.1 (never another address) with a certificate from test-pki.ts. `tls` adds or
 * overrides server TLS options (e.g. `maxVersion: 'TLSv1.1'`).
 */
export async function startHttpsTestServer(
  certificate: TestCertificate,
  handler: TestHandler = echoHandler,
  tls: SecureContextOptions = {},
): Promise<TestHttpsServer> {
  let connections = 0;
  let requests = 0;
  const servernames: (string | false | null)[] = [];
  const server = createServer({ key: certificate.key, cert: certificate.cert, ...tls }, (req, res) => {
    requests++;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handler(req, res, Buffer.concat(chunks)));
  });
  server.on('connection', () => connections++);
  server.on('secureConnection', (socket: TLSSocket) => servernames.push(socket.servername));
  // Handshake failures are expected in some tests; they must not surface as unhandled errors.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    get requests() {
      return requests;
    },
    servernames,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
