import { Injectable } from '@nestjs/common';
import { ApplicationPrincipals } from '../applications/application-principals.service';
import { ApiError } from '../common/api-error';
import { Database } from '../database/database.service';
import { BtBridge } from '../sandbox-bridges/bt-bridge';
import { FetchBridge } from '../sandbox-bridges/fetch-bridge';
import { failureToError } from '../sandbox/sandbox-outcome';
import { JsonValue, SandboxProvider } from '../sandbox/sandbox.provider';
import { applyAppend, MASK_CODE, TransformState } from './builtin-transforms';
import type { StoredTransform } from './dto/proxy-transform.dto';
import { bodyForCode, bodyFromCode, bodyKind } from './proxy-body';
import { HeaderMap, headersFromCode } from './proxy-request';
import type { LoadedProxy } from './loaded-proxy';
import { CreatedTokens, TokenizeTransform } from './tokenize-transform';

/** What a transform returned: headers to send instead (when it gave any) and the body (when it gave one). */
export interface TransformResult {
  headers: HeaderMap | undefined;
  hasBody: boolean;
  body: unknown;
}

/**
 * Runs a proxy's request or response transform in the sandbox with `{ args, configuration, bt }`
 * (DESIGN §7): `bt` acts with the proxy's application, and is null without one; `fetch` leaves through the
 * same destination guard as the proxy itself.
 */
@Injectable()
export class ProxyTransforms {
  constructor(
    private readonly sandbox: SandboxProvider,
    private readonly applications: ApplicationPrincipals,
    private readonly bt: BtBridge,
    private readonly fetch: FetchBridge,
    private readonly tokenize: TokenizeTransform,
    private readonly db: Database,
  ) {}

  async run(
    proxy: LoadedProxy,
    code: string,
    args: { [key: string]: JsonValue },
    signal?: AbortSignal,
  ): Promise<TransformResult> {
    const { tenantId, applicationId } = proxy.proxy;
    const application =
      applicationId === null ? null : await this.applications.principalFor(tenantId, applicationId);
    const outcome = await this.sandbox.run({
      tenantId,
      signal,
      code,
      req: { args, configuration: proxy.configuration },
      bt: application === null ? undefined : this.bt.handlers(application),
      host: this.fetch.handlers(),
    });
    if (!outcome.ok) {
      throw failureToError(outcome.error, 'transform');
    }
    return resultOf(outcome.value);
  }

  /**
   * Runs one side's transforms in order, each on what the one before left: code gets
   * `{ body, headers, ...extra }` as a single transform does, `mask` runs in the sandbox, `tokenize` and
   * `append_*` here (an `append_*` value can name a token an earlier `tokenize` created).
   */
  runAll(
    proxy: LoadedProxy,
    side: 'request' | 'response',
    steps: StoredTransform[],
    start: TransformState,
    extra: { [key: string]: JsonValue },
    signal?: AbortSignal,
  ): Promise<TransformState> {
    const run = () => this.runSteps(proxy, side, steps, start, extra, signal);
    // The tokens of a list are created all or none: a later step's refusal takes back the earlier ones.
    return steps.filter((step) => step.type === 'tokenize').length > 1 ? this.db.transaction(run) : run();
  }

  private async runSteps(
    proxy: LoadedProxy,
    side: 'request' | 'response',
    steps: StoredTransform[],
    start: TransformState,
    extra: { [key: string]: JsonValue },
    signal?: AbortSignal,
  ): Promise<TransformState> {
    let state = start;
    const created: CreatedTokens = new Map();
    for (const step of steps) {
      if (step.type === 'code' || step.type === 'mask') {
        const body = state.body ?? Buffer.alloc(0);
        const contentType = state.headers['content-type'];
        const kind = bodyKind(Array.isArray(contentType) ? contentType[0] : contentType);
        const result =
          step.type === 'code'
            ? await this.run(
                proxy,
                step.code ?? '',
                { body: bodyForCode(body, kind), headers: singleValued(state.headers), ...extra },
                signal,
              )
            : await this.mask(proxy, step, body.toString('utf8'), signal);
        state = applyResult(result, state.headers, state.body);
      } else if (step.type === 'tokenize') {
        state = await this.tokenize.apply(proxy, side, step, state, created);
      } else {
        const value = this.tokenize.resolve(step.options?.value ?? '', created);
        state = applyAppend({ ...step, options: { ...step.options, value } }, state);
      }
    }
    return state;
  }

  private async mask(
    proxy: LoadedProxy,
    step: StoredTransform,
    body: string,
    signal?: AbortSignal,
  ): Promise<TransformResult> {
    const outcome = await this.sandbox.run({
      tenantId: proxy.proxy.tenantId,
      signal,
      code: MASK_CODE,
      req: {
        args: { body, expression: step.expression ?? '', replacement: step.replacement ?? '*' },
        configuration: {},
      },
    });
    if (!outcome.ok) {
      throw failureToError(outcome.error, 'transform');
    }
    return resultOf(outcome.value);
  }
}

/** One side's transforms: the listed ones, else the single code transform, else none. */
export function stepsOf(proxy: LoadedProxy | null, side: 'request' | 'response'): StoredTransform[] {
  if (proxy === null) {
    return [];
  }
  const { requestTransforms, responseTransforms, requestTransformCode, responseTransformCode } = proxy.proxy;
  const listed = side === 'request' ? requestTransforms : responseTransforms;
  if (listed !== null) {
    return listed;
  }
  const code = side === 'request' ? requestTransformCode : responseTransformCode;
  return code === null ? [] : [{ type: 'code', code }];
}

function resultOf(value: JsonValue): TransformResult {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError(500, 'The transform must return an object such as { body, headers }.', {
      error: ['The transform returned a value that is not an object.'],
    });
  }
  return {
    headers: value.headers === undefined ? undefined : headersFromCode(value.headers),
    hasBody: Object.prototype.hasOwnProperty.call(value, 'body'),
    body: value.body,
  };
}

/** Headers as transform code sees them: one string per name. */
export function singleValued(headers: HeaderMap): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** What a transform returned, as headers and bytes to send; what it left out stays as it was. */
export function applyResult(
  result: TransformResult,
  headers: HeaderMap,
  body: Buffer | undefined,
): { headers: HeaderMap; body: Buffer | undefined } {
  const out = { ...(result.headers ?? headers) };
  if (!result.hasBody) {
    return { headers: out, body };
  }
  // A body given as a JSON value is sent as JSON: say so when the code named no type.
  if (typeof result.body === 'object' && result.body !== null && out['content-type'] === undefined) {
    out['content-type'] = 'application/json';
  }
  return { headers: out, body: bodyFromCode(result.body) };
}
