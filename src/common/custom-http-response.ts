/**
 * A literal response chosen by tenant code (a reactor's or transform's CustomHttpResponseError), part of the
 * error contract: the sandbox produces it, the error filter and the proxy send it as an untrusted answer
 * (security-headers.ts sendCustomResponse).
 */
export class CustomHttpResponse extends Error {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly body: unknown,
  ) {
    super('custom response');
  }
}
