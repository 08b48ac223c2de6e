import { ApiError } from '../common/api-error';
import type { HostHandler, JsonValue } from './sandbox.provider';

export type HostReply = { ok: true; value: string } | { ok: false; error: object };

/**
 * Answers one bridged call from sandboxed code: the named handler of the run with its JSON arguments,
 * within the run's call count and the size limit of arguments and result.
 */
export async function answerHostCall(
  handlers: Record<string, HostHandler>,
  name: string,
  args: Buffer,
  calls: number,
  limits: { maxHostCalls: number; maxHostBytes: number },
): Promise<HostReply> {
  const handler = Object.prototype.hasOwnProperty.call(handlers, name) ? handlers[name] : undefined;
  if (handler === undefined) {
    return { ok: false, error: { status: 400, detail: 'This capability is not available here.' } };
  }
  if (calls > limits.maxHostCalls) {
    return { ok: false, error: { status: 429, detail: `At most ${limits.maxHostCalls} calls per run.` } };
  }
  if (args.length > limits.maxHostBytes) {
    return { ok: false, error: { status: 413, detail: 'The call arguments are too large.' } };
  }
  try {
    const parsed = JSON.parse(args.toString('utf8')) as unknown;
    const value = await handler(Array.isArray(parsed) ? (parsed as JsonValue[]) : []);
    const json = JSON.stringify(value ?? null);
    if (json.length > limits.maxHostBytes) {
      return { ok: false, error: { status: 413, detail: 'The call result is too large.' } };
    }
    return { ok: true, value: json };
  } catch (err) {
    const problem =
      err instanceof ApiError
        ? { status: err.status, detail: err.detail, errors: err.errors }
        : { status: 500, detail: 'The call failed.' };
    return { ok: false, error: problem };
  }
}
