import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { OutboundClient } from '../outbound';
import type { HostHandler, JsonValue } from '../sandbox/sandbox.provider';

/** Outbound calls one run (a reaction, a transform) may make, and the response bytes they may bring back. */
export const MAX_FETCHES_PER_RUN = 20;
export const MAX_FETCH_RESPONSE_BYTES_PER_RUN = 5 * 1024 * 1024;
/** One request body sent by sandboxed code. */
export const MAX_FETCH_REQUEST_BYTES = 1024 * 1024;

const MAX_HEADERS = 100;

/**
 * The host side of `fetch` (and the axios / node-fetch shims) in sandboxed code: each call leaves through
 * OutboundClient, so the destination guard, TLS rules and timeouts of the proxy apply to tenant code as
 * well. Counters are per run: `handlers()` is called once per invocation. URLs, headers and bodies are
 * never logged.
 */
@Injectable()
export class FetchBridge {
  constructor(
    private readonly outbound: OutboundClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  handlers(): Record<string, HostHandler> {
    let calls = 0;
    let responseBytes = 0;
    return {
      fetch: async ([url, init]) => {
        if (++calls > MAX_FETCHES_PER_RUN) {
          throw new ApiError(429, `At most ${MAX_FETCHES_PER_RUN} outbound requests per run.`);
        }
        const request = readInit(url, init);
        const remaining = MAX_FETCH_RESPONSE_BYTES_PER_RUN - responseBytes;
        if (remaining <= 0) {
          throw new ApiError(413, 'The outbound responses of this run have reached their size limit.');
        }
        const response = await this.outbound.requestBuffered(
          { ...request, timeoutMs: this.config.sandboxTimeoutMs },
          remaining,
        );
        responseBytes += response.body.length;
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) {
            headers[name] = Array.isArray(value) ? value.join(', ') : value;
          }
        }
        return {
          status: response.status,
          statusText: response.statusText,
          headers,
          body: response.body.toString('utf8'),
        };
      },
    };
  }
}

function readInit(
  url: JsonValue,
  init: JsonValue | undefined,
): { method: string; url: string; headers: Record<string, string>; body?: string } {
  if (typeof url !== 'string') {
    throw ApiError.badRequest('fetch needs a URL string.');
  }
  const options = typeof init === 'object' && init !== null && !Array.isArray(init) ? init : {};
  const method = typeof options.method === 'string' ? options.method : 'GET';
  const headers: Record<string, string> = {};
  const given = options.headers;
  if (typeof given === 'object' && given !== null && !Array.isArray(given)) {
    for (const [name, value] of Object.entries(given).slice(0, MAX_HEADERS)) {
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
        headers[name] = String(value);
      }
    }
  }
  const body = options.body;
  if (body !== undefined && body !== null && typeof body !== 'string') {
    throw ApiError.badRequest('A fetch body must be a string.');
  }
  if (typeof body === 'string' && Buffer.byteLength(body) > MAX_FETCH_REQUEST_BYTES) {
    throw new ApiError(413, `A fetch body may hold at most ${MAX_FETCH_REQUEST_BYTES / 1024 / 1024} MB.`);
  }
  return { method, url, headers, ...(typeof body === 'string' ? { body } : {}) };
}
