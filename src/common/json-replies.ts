import { HttpServer, StreamableFile } from '@nestjs/common';
import { Stream } from 'node:stream';
import type { Response } from 'express';

type Reply = (response: Response, body: unknown, statusCode?: number) => unknown;

/** Statuses whose answers carry no body (Express strips it, and sets or drops headers for them). */
function bodyless(status: number): boolean {
  return status < 200 || status === 204 || status === 205 || status === 304;
}

/**
 * Answers a handler's object as JSON with the bytes and headers Express's `res.json` would send
 * (`application/json; charset=utf-8`, Content-Length; no ETag, which the app turns off, so never a 304),
 * without its detour: `res.send` parses the Content-Type it has just set to add the charset, and looks the
 * type up again, on every answer. Anything else (no body, a stream or file, text, a HEAD request, a
 * Content-Type the handler chose, a bodyless status) goes to Nest's own reply.
 */
export function fastJsonReplies(adapter: HttpServer): void {
  const reply = (adapter.reply as Reply).bind(adapter);
  adapter.reply = ((response: Response, body: unknown, statusCode?: number): unknown => {
    if (
      typeof body !== 'object' ||
      body === null ||
      body instanceof StreamableFile ||
      body instanceof Stream ||
      Buffer.isBuffer(body) ||
      response.req.method === 'HEAD' ||
      response.getHeader('Content-Type') !== undefined ||
      bodyless(statusCode ?? response.statusCode)
    ) {
      return reply(response, body, statusCode);
    }
    const text = JSON.stringify(body) as string | undefined;
    if (text === undefined) {
      return reply(response, body, statusCode);
    }
    if (statusCode !== undefined) {
      response.statusCode = statusCode;
    }
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
    response.setHeader('Content-Length', Buffer.byteLength(text));
    response.end(text);
    return undefined;
  }) as HttpServer['reply'];
}
