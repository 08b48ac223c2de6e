import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import * as https from 'node:https';
import { PassThrough, Readable, Transform, type Duplex } from 'node:stream';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { DestinationGuard, OutboundConnector, OutboundResolver } from './destination-guard';
import { checkDestinationUrl } from './destination-url';
import { HOP_BY_HOP_HEADERS } from './hop-by-hop';
import { OutboundError, toOutboundError } from './outbound.errors';
import { OUTBOUND_CONNECTOR, OUTBOUND_RESOLVER } from './outbound.tokens';

export interface OutboundRequest {
  /** GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS (any case). */
  method: string;
  url: string | URL;
  /**
   * Sent as given, except the fields the client owns: Host, Content-Length, Expect and the hop-by-hop
   * fields (framing and connection reuse are the client's job).
   */
  headers?: Record<string, string | string[] | number | undefined>;
  /** A Readable is streamed: with its Content-Length header if the caller gave one (then enforced), else chunked. */
  body?: Buffer | Uint8Array | string | Readable;
  /** Aborts the request, or the response body once it has started. */
  signal?: AbortSignal;
  /** A shorter deadline than PROXY_TIMEOUT_MS; a longer one is cut to it. */
  timeoutMs?: number;
}

export interface OutboundResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** Names and values as received, in order (case and duplicates kept), for a forwarder. */
  rawHeaders: string[];
  /**
   * The body, streamed and untouched. The caller must read or destroy it: until then the connection is
   * not returned to the pool. The deadline covers it; on expiry it errors with a 408 OutboundError.
   */
  body: Readable;
}

export interface BufferedOutboundResponse extends Omit<OutboundResponse, 'body'> {
  body: Buffer;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const CLIENT_OWNED_HEADERS = new Set([...HOP_BY_HOP_HEADERS, 'host', 'content-length', 'expect']);

// Below the 5 s keep-alive timeout of Node servers (and most others): we close an idle socket before the
// server does, so a reused socket is rarely reset under a request. A `Keep-Alive: timeout=` hint shortens it.
const IDLE_SOCKET_MS = 4000;
const MAX_SOCKETS_PER_DESTINATION = 256;
const MAX_IDLE_SOCKETS_PER_DESTINATION = 32;

/**
 * One keep-alive pool per destination (Node keys pools by host name and port). Every socket in it was
 * opened by createConnection below, so through the guard; there is no other way to make one. A pooled
 * socket goes to an address that was checked when it was opened and whose certificate was verified for
 * this host name, so reusing it after a DNS change is as safe as the connection was; new sockets check
 * the new answer.
 */
class GuardedAgent extends https.Agent {
  constructor(private readonly guard: DestinationGuard) {
    super({
      keepAlive: true,
      timeout: IDLE_SOCKET_MS,
      maxSockets: MAX_SOCKETS_PER_DESTINATION,
      maxFreeSockets: MAX_IDLE_SOCKETS_PER_DESTINATION,
      scheduling: 'lifo',
    });
  }

  override createConnection(
    options: https.RequestOptions,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const done = callback as (err: Error | null, stream?: Duplex) => void;
    const { host, port } = options;
    if (typeof host !== 'string' || typeof port !== 'number') {
      done(OutboundError.refused('the destination is incomplete'));
      return undefined;
    }
    this.guard.connect(host, port).then(
      (socket) => done(null, socket),
      (err: unknown) => done(toOutboundError(err)),
    );
    return undefined;
  }
}

/** Enforces the declared Content-Length on a streamed body: more or fewer bytes would desync the connection. */
function exactLength(expected: number): Transform {
  let seen = 0;
  const mismatch = (): OutboundError =>
    new OutboundError('request_body_failed', 'The request body does not match its Content-Length.');
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > expected ? mismatch() : null, chunk);
    },
    flush(done) {
      done(seen === expected ? null : mismatch());
    },
  });
}

/**
 * The response body as the caller sees it: the same bytes, errors as OutboundError (a reset mid-body is a
 * 502 like any other upstream failure), and the response destroyed if the caller gives up early, so its
 * half-read connection is closed rather than pooled.
 */
function typedErrors(res: IncomingMessage): Readable {
  const body = new PassThrough();
  res.on('error', (err) => body.destroy(toOutboundError(err)));
  body.on('close', () => {
    if (!res.readableEnded) {
      res.destroy();
    }
  });
  return res.pipe(body);
}

/**
 * The only way out of the vault (DESIGN §6): HTTPS to a checked destination, redirects returned to the
 * caller, PROXY_TIMEOUT_MS as a deadline (408), keep-alive pools per destination.
 */
@Injectable()
export class OutboundClient implements OnApplicationShutdown {
  private readonly agent: GuardedAgent;
  private readonly timeoutMs: number;
  private readonly allowLoopback: boolean;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(OUTBOUND_RESOLVER) resolver: OutboundResolver,
    @Inject(OUTBOUND_CONNECTOR) connector: OutboundConnector,
  ) {
    this.timeoutMs = config.proxyTimeoutMs;
    this.allowLoopback = config.proxyAllowLoopback;
    this.agent = new GuardedAgent(
      new DestinationGuard({
        resolver,
        connector,
        allowLoopback: config.proxyAllowLoopback,
        connectTimeoutMs: config.proxyTimeoutMs,
      }),
    );
  }

  /**
   * Sends one HTTP/1.1 request and resolves with the response head once it arrives; the body streams.
   * Rejects with an OutboundError (refused destination, DNS, connection, TLS, timeout).
   */
  async request(request: OutboundRequest): Promise<OutboundResponse> {
    const destination = checkDestinationUrl(request.url, { allowLoopback: this.allowLoopback });
    if (!destination.ok) {
      throw OutboundError.refused(destination.reason);
    }
    const method = request.method.toUpperCase();
    if (!METHODS.has(method)) {
      throw new OutboundError('invalid_request', 'The HTTP method is not supported.');
    }
    if (request.signal?.aborted === true) {
      throw new OutboundError('aborted', 'The request was aborted.');
    }
    const { hostname, port, url } = destination;
    const headers: OutgoingHttpHeaders = {};
    let declaredLength: number | undefined;
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      const lower = name.toLowerCase();
      if (lower === 'content-length' && typeof value !== 'object' && /^\d{1,15}$/.test(String(value))) {
        declaredLength = Number(value);
      }
      if (value !== undefined && !CLIENT_OWNED_HEADERS.has(lower)) {
        headers[lower] = value;
      }
    }
    headers.host = port === 443 ? hostname : `${hostname}:${port}`;
    const { body } = request;
    if (body !== undefined && !(body instanceof Readable)) {
      headers['content-length'] = Buffer.byteLength(body);
    } else if (body instanceof Readable && declaredLength !== undefined) {
      headers['content-length'] = declaredLength;
    }
    const timeoutMs = Math.min(request.timeoutMs ?? this.timeoutMs, this.timeoutMs);
    return this.send(
      { host: hostname, port, method, path: `${url.pathname}${url.search}`, headers },
      { body, declaredLength, signal: request.signal, timeoutMs },
    );
  }

  /** request() with the body read into memory; more than `maxBytes` fails with 502 response_too_large. */
  async requestBuffered(request: OutboundRequest, maxBytes: number): Promise<BufferedOutboundResponse> {
    const response = await this.request(request);
    const tooLarge = (): OutboundError => {
      response.body.destroy();
      return new OutboundError('response_too_large', 'The destination response is too large.');
    };
    if (Number(response.headers['content-length']) > maxBytes) {
      throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) {
          throw tooLarge();
        }
        chunks.push(chunk);
      }
    } catch (err) {
      throw toOutboundError(err);
    }
    return { ...response, body: Buffer.concat(chunks) };
  }

  /** Closes every pooled connection. */
  close(): void {
    this.agent.destroy();
  }

  /** Runs after the HTTP server has drained its in-flight requests (main.ts stops it before closing the app). */
  onApplicationShutdown(): void {
    this.close();
  }

  private send(
    options: { host: string; port: number; method: string; path: string; headers: OutgoingHttpHeaders },
    flow: { body: OutboundRequest['body']; declaredLength?: number; signal?: AbortSignal; timeoutMs: number },
  ): Promise<OutboundResponse> {
    return new Promise<OutboundResponse>((resolve, reject) => {
      let clientRequest: ClientRequest;
      try {
        clientRequest = https.request({ ...options, agent: this.agent, setHost: false });
      } catch {
        // Node validates header names and values here; its message would quote them.
        reject(new OutboundError('invalid_request', 'A request header name or value is not valid.'));
        return;
      }
      const { body, signal } = flow;
      let response: IncomingMessage | undefined;
      const cleanUp = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const fail = (err: OutboundError): void => {
        cleanUp();
        if (response === undefined) {
          reject(err);
          clientRequest.destroy(err);
        } else if (!response.destroyed) {
          // Already handed over: the body stream carries the error to whoever reads it.
          response.destroy(err);
        }
        if (body instanceof Readable) {
          body.unpipe();
        }
      };
      const onAbort = (): void => fail(new OutboundError('aborted', 'The request was aborted.'));
      const timer = setTimeout(() => fail(OutboundError.timeout(flow.timeoutMs)), flow.timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });

      clientRequest.on('error', (err) => fail(toOutboundError(err)));
      clientRequest.on('response', (res) => {
        response = res;
        res.on('close', cleanUp);
        resolve({
          status: res.statusCode ?? 502,
          statusText: res.statusMessage ?? '',
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          body: typedErrors(res),
        });
      });

      if (body === undefined) {
        clientRequest.end();
      } else if (body instanceof Readable) {
        // pipe(), not pipeline(): a failure here must not destroy the caller's stream (for a forwarder,
        // its own client's request, which it still has to answer).
        body.on('error', () =>
          fail(new OutboundError('request_body_failed', 'The request body could not be read.')),
        );
        if (flow.declaredLength === undefined) {
          body.pipe(clientRequest);
        } else {
          const counter = exactLength(flow.declaredLength);
          counter.on('error', (err) => fail(toOutboundError(err)));
          body.pipe(counter).pipe(clientRequest);
        }
      } else {
        clientRequest.end(body);
      }
    });
  }
}
