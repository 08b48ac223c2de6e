import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { TestContext } from '../support/test-app';

/** Supertest calls on /documents with one API key; every call must be awaited. */
export function documentsApi(ctx: TestContext, key: string) {
  return {
    upload: (data: Buffer, request?: string, contentType = 'application/pdf') => {
      const call = ctx.http
        .post('/documents')
        .set('BT-API-KEY', key)
        .attach('document', data, { filename: 'file.bin', contentType });
      return request === undefined ? call : call.field('request', request);
    },
    get: (id: string) => ctx.http.get(`/documents/${id}`).set('BT-API-KEY', key),
    data: (id: string) =>
      ctx.http
        .get(`/documents/${id}/data`)
        .set('BT-API-KEY', key)
        .buffer(true)
        .parse((res, done) => {
          const parts: Buffer[] = [];
          res.on('data', (d: Buffer) => parts.push(d));
          res.on('end', () => done(null, Buffer.concat(parts)));
        }),
    delete: (id: string) => ctx.http.delete(`/documents/${id}`).set('BT-API-KEY', key),
  };
}

/** Rows of documents and of their chunks in the tenant: what uploads left behind. */
export async function storedRows(
  ctx: TestContext,
  tenantId: string,
): Promise<{ documents: number; chunks: number }> {
  const [row] = await ctx.dataSource.query<{ documents: number; chunks: number }[]>(
    `SELECT (SELECT count(*)::int FROM documents WHERE tenant_id = $1) AS documents,
            (SELECT count(*)::int FROM document_chunks WHERE tenant_id = $1) AS chunks`,
    [tenantId],
  );
  return row;
}

export const BOUNDARY = 'vault-test-boundary';

/** The multipart framing around a file part named `document` (then the closing boundary). */
export function multipartHead(contentType = 'application/octet-stream'): Buffer {
  return Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="document"; filename="big.bin"\r\n` +
      `Content-Type: ${contentType}\r\n\r\n`,
  );
}
export const MULTIPART_TAIL = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

/**
 * A raw upload whose body the caller writes (chunked, no Content-Length unless given): for bodies cut off
 * mid-way or far over the limit, which supertest would send whole.
 */
export function rawUpload(
  server: Server | { port: number },
  key: string,
  contentLength?: number,
): { req: ReturnType<typeof httpRequest>; response: Promise<{ status: number; body: string }> } {
  const port = 'port' in server ? server.port : (server.address() as AddressInfo).port;
  const req = httpRequest({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/documents',
    headers: {
      'BT-API-KEY': key,
      'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
      ...(contentLength === undefined ? {} : { 'Content-Length': String(contentLength) }),
    },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  return { req, response };
}
