import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { ApplicationPrincipals } from '../applications/application-principals.service';
import { API_KEY_HEADER, Authenticator } from '../auth/authenticator.service';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { isChosenStatus, MAX_CHOSEN_STATUS, MIN_CHOSEN_STATUS } from '../common/limits';
import { clientGoneSignal } from '../common/client-gone';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Idempotency } from '../idempotency/idempotency.service';
import { MetricsService } from '../metrics/metrics.service';
import { RateLimits } from '../rate-limits/rate-limits.service';
import { checkDestinationUrl, OutboundClient, OutboundError, OutboundResponse } from '../outbound';
import { DetokenizationRecords, DetokenizeService } from '../tokens/detokenize.service';
import {
  BodyKind,
  bodyKind,
  MAX_PROXY_BODY_BYTES,
  parseJsonBody,
  readAll,
  requestTooLarge,
} from './proxy-body';
import {
  destinationUrl,
  forwardedHeaders,
  forwardedPath,
  forwardedQuery,
  PROXY_KEY_HEADER,
  PROXY_KEY_QUERY,
  PROXY_URL_HEADER,
  TRACE_HEADER,
} from './proxy-request';
import { relay, sendTransformed } from './proxy-response';
import { ProxyTransforms, stepsOf } from './proxy-transforms';
import { LoadedProxy } from './loaded-proxy';
import { ProxiesService } from './proxies.service';
import { AuditService } from '../audit/audit.service';
import { AuditEvent } from '../audit/audit-event';

/** Where a /proxy request goes and with whose rights (spec §4.5, §5 rule 2). */
interface Route {
  destination: string;
  /** Detokenizes the body; null when nobody may (a proxy without auth and without an application). */
  detokenizer: Principal | null;
  proxy: LoadedProxy | null;
  /** The authenticated caller, whose idempotency keys apply; null for an anonymous call (keeps none). */
  caller: Principal | null;
  /**
   * The destination's part of the caller's idempotency key space: one space per caller and destination.
   * Worked out only for a keyed request (a URL's is a digest).
   */
  keySpace: () => string;
}

/**
 * The /proxy forwarder: routes by proxy key or URL, authenticates, detokenizes the body with the caller's
 * (or the proxy application's) token:use, runs transforms in the sandbox and relays the destination's
 * answer. Every outbound byte goes through OutboundClient, the one guarded way out.
 */
@Injectable()
export class ProxyForwarder {
  private readonly logger = new Logger('Proxy');

  constructor(
    private readonly proxies: ProxiesService,
    private readonly applications: ApplicationPrincipals,
    private readonly detokenizer: DetokenizeService,
    private readonly outbound: OutboundClient,
    private readonly transforms: ProxyTransforms,
    private readonly metrics: MetricsService,
    private readonly authenticator: Authenticator,
    private readonly idempotency: Idempotency,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly limits: RateLimits,
    private readonly audit: AuditService,
  ) {}

  /** Sends the destination's answer on `res`, or throws for the caller to answer with a proxy_error. */
  async forward(req: Request, res: Response): Promise<void> {
    const route = await this.route(req, res);
    const path = forwardedPath(req.originalUrl);
    const query = forwardedQuery(req.originalUrl);
    const url = destinationUrl(route.destination, path, query);
    const checked = checkDestinationUrl(url, { allowLoopback: this.config.proxyAllowLoopback });
    if (!checked.ok) {
      throw OutboundError.refused(checked.reason);
    }
    let headers = forwardedHeaders(req.headers);
    const trace = res.getHeader(TRACE_HEADER);
    if (typeof trace === 'string') {
      headers[TRACE_HEADER] = trace;
    }
    const kind = bodyKind(req.headers['content-type']);
    const proxy = route.proxy;
    const idempotencyKey = this.idempotency.keyOf(req);
    // A keyed request's body is read whole: a retry must be recognised by its bytes.
    const streamed = idempotencyKey === null && kind === 'opaque' && stepsOf(proxy, 'request').length === 0;
    const raw =
      streamed || !hasBody(req) ? undefined : await readAll(req, MAX_PROXY_BODY_BYTES, requestTooLarge);
    if (idempotencyKey !== null) {
      const owner =
        route.caller === null
          ? this.idempotency.refuseAnonymous()
          : this.idempotency.scopeOf(route.caller, route.keySpace());
      const bodyHash = createHash('sha256')
        .update(raw ?? Buffer.alloc(0))
        .digest('hex');
      if (!(await this.idempotency.handle(req, res, idempotencyKey, owner, bodyHash))) {
        return;
      }
    }
    // Written (or the request refused) before any detokenized byte leaves: one record per forwarded request,
    // and the record of the tokens it used, in one statement (with the read of its tokens where the caller's
    // transform is the same on every container).
    const records: DetokenizationRecords = {
      events: [proxiedEvent(route.proxy, route.detokenizer, req.method)],
      written: false,
    };
    let body: Buffer | Request | undefined =
      streamed || proxy?.proxy.disableDetokenization === true
        ? streamed
          ? bodyOrNothing(req)
          : raw
        : await this.detokenizedBody(raw, kind, route.detokenizer, records).catch((err: unknown) =>
            this.auditRefusal(err, route, req, res, records.written),
          );
    if (!records.written) {
      await this.audit.recordAll(records.events);
    }

    // Aborted when our caller goes away: drops a transform still waiting for the sandbox, ends the upstream.
    const gone = clientGoneSignal(res);
    const requestSteps = stepsOf(proxy, 'request');
    if (proxy !== null && requestSteps.length > 0) {
      ({ headers, body } = await this.transforms.runAll(
        proxy,
        'request',
        requestSteps,
        { headers, body: body as Buffer | undefined },
        { method: req.method, path, query: query.replace(/^\?/, '') },
        gone,
      ));
    } else if (streamed && body !== undefined && req.headers['content-length'] !== undefined) {
      headers['content-length'] = req.headers['content-length'];
    }

    const responseSteps = stepsOf(proxy, 'response');
    if (responseSteps.length > 0) {
      // A transform reads the body as text or JSON: ask for it uncompressed.
      headers['accept-encoding'] = 'identity';
    }
    const stopTimer = this.metrics.proxyUpstream.startTimer();
    let response: OutboundResponse;
    try {
      response = await this.outbound.request({
        method: req.method,
        url: checked.url,
        headers,
        body,
        signal: gone,
      });
    } catch (err) {
      stopTimer({ outcome: err instanceof OutboundError ? err.failure : 'error' });
      if (err instanceof OutboundError && err.failure !== 'aborted') {
        // Why, for the operator: the answer's detail may leave it out (a name that does not resolve).
        this.logger.warn(
          { proxy: proxy?.proxy.id, failure: err.failure, code: err.code, reason: err.logReason },
          'proxy destination failed',
        );
      }
      throw err;
    }
    stopTimer({ outcome: 'response' });
    if (!isChosenStatus(response.status)) {
      response.body.destroy();
      throw new ApiError(
        502,
        `The destination answered with a status outside ${MIN_CHOSEN_STATUS}-${MAX_CHOSEN_STATUS}.`,
      );
    }

    if (responseSteps.length > 0 && proxy !== null && response.status >= 200 && response.status < 300) {
      await sendTransformed(res, response, (state) =>
        this.transforms.runAll(proxy, 'response', responseSteps, state, { status: response.status }, gone),
      );
      return;
    }
    await relay(res, response);
  }

  private async route(req: Request, res: Response): Promise<Route> {
    const key = single(req.headers[PROXY_KEY_HEADER], PROXY_KEY_HEADER) ?? queryKey(req);
    const url = single(req.headers[PROXY_URL_HEADER], PROXY_URL_HEADER);
    if (key !== undefined && url !== undefined) {
      throw ApiError.badRequest('Send either BT-PROXY-KEY or BT-PROXY-URL, not both.');
    }
    if (key !== undefined) {
      return this.configuredRoute(req, res, key);
    }
    if (url === undefined) {
      throw ApiError.badRequest(
        'A BT-PROXY-KEY header (or bt-proxy-key query parameter) or a BT-PROXY-URL header is required.',
      );
    }
    // Calls with BT-PROXY-URL always authenticate (spec §5 rule 2).
    const caller = await this.caller(req, res);
    const keySpace = (): string => `url:${sha256(url)}`;
    return { destination: url, detokenizer: caller, proxy: null, caller, keySpace };
  }

  private async configuredRoute(req: Request, res: Response, key: string): Promise<Route> {
    // A proxy key may be all a caller has (require_auth:false): limited by address before the lookup. A
    // call with a BT-API-KEY is counted once that key is checked: a valid one never by the address.
    const keyed = req.headers[API_KEY_HEADER] !== undefined && req.headers[API_KEY_HEADER] !== '';
    if (!keyed) {
      this.limits.refuseFloodingAddress(req);
      await this.limits.countUnauthenticated(req);
    }
    const proxy = await this.proxies.findByKey(key);
    if (proxy === null) {
      await this.limits.countUnauthenticated(req);
      throw new ApiError(404, 'No proxy has this proxy key.');
    }
    const { tenantId, applicationId } = proxy.proxy;
    if (proxy.proxy.requireAuth) {
      const caller = await this.caller(req, res);
      if (caller.tenantId !== tenantId) {
        // Another tenant's proxy is answered like a missing one: its existence is not revealed.
        throw new ApiError(404, 'No proxy has this proxy key.');
      }
      const keySpace = (): string => `proxy:${proxy.proxy.id}`;
      return { destination: proxy.proxy.destinationUrl, detokenizer: caller, proxy, caller, keySpace };
    }
    // No caller: limited per proxy and address; the proxy's application (if any) supplies the rights to
    // detokenize (DESIGN §7). Anonymous, so also counted by address (once: a no-op when counted above).
    await this.limits.countUnauthenticated(req);
    await this.limits.admitProxyCall(proxy.proxy.id, req, res);
    const application =
      applicationId === null ? null : await this.applications.principalFor(tenantId, applicationId);
    return {
      destination: proxy.proxy.destinationUrl,
      detokenizer: application,
      proxy,
      caller: null,
      keySpace: () => `proxy:${proxy.proxy.id}`,
    };
  }

  /**
   * A detokenization refused by a permission or access rule is audited as denied, naming the proxy (the
   * generic refusal record knows neither the proxy nor, on a proxy without authentication, the actor). A
   * refusal of the vault's own after the request's records were written (an expression that cannot be
   * rendered) is audited too: nothing was forwarded.
   */
  private async auditRefusal(
    err: unknown,
    route: Route,
    req: Request,
    res: Response,
    recorded: boolean,
  ): Promise<never> {
    const proxied = proxiedEvent(route.proxy, route.detokenizer, req.method);
    if (err instanceof ApiError && err.status === 403 && !recorded) {
      res.locals.refusalAudited = true;
      await this.audit.record({
        ...proxied,
        outcome: 'denied',
        message: `Detokenization refused (${req.method}): ${err.message}`,
      });
    } else if (err instanceof ApiError && err.status >= 400 && err.status < 500 && recorded) {
      res.locals.refusalAudited = true;
      await this.audit.record({
        ...proxied,
        outcome: err.status === 403 ? 'denied' : 'failed',
        message: `Request refused before forwarding (${req.method}): ${err.status}`,
      });
    }
    throw err;
  }

  /** The caller, authenticated (and rate limited) as the guard does, with token:use (spec §5). */
  private caller(req: Request, res: Response): Promise<Principal> {
    return this.authenticator.authenticate(req, res, ['token:use']);
  }

  /**
   * The body with its expressions replaced; `records` are written with the record of the tokens used where
   * there are expressions, and left for the caller to write where there are none.
   */
  private async detokenizedBody(
    raw: Buffer | undefined,
    kind: BodyKind,
    principal: Principal | null,
    records: DetokenizationRecords,
  ): Promise<Buffer | undefined> {
    // Expressions need `{{` (percent-encoded in a form): a body without it is sent as received, byte for byte.
    if (
      raw === undefined ||
      kind === 'opaque' ||
      !(raw.includes('{{') || (kind === 'form' && /%7b%7b/i.test(raw.toString('latin1'))))
    ) {
      return raw;
    }
    const text = raw.toString('utf8');
    if (kind === 'json') {
      const value = await this.detokenizer.detokenizeRecorded(
        allowed(principal),
        parseJsonBody(text),
        records,
      );
      return Buffer.from(JSON.stringify(value));
    }
    if (kind === 'form') {
      const form = new URLSearchParams(text);
      const pairs = [...form.entries()];
      if (!pairs.some(([, value]) => value.includes('{{'))) {
        return raw;
      }
      // One detokenization (one query) for every field; each field becomes text again.
      const values = (await this.detokenizer.detokenizeRecorded(
        allowed(principal),
        pairs.map(([, v]) => v),
        records,
      )) as unknown[];
      const out = new URLSearchParams();
      pairs.forEach(([name], i) => out.append(name, asText(values[i])));
      return Buffer.from(out.toString());
    }
    return Buffer.from(await this.detokenizer.detokenizeTextRecorded(allowed(principal), text, records));
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** One record per forwarded request: the configured proxy (if any), acting as whoever detokenizes. */
function proxiedEvent(proxy: LoadedProxy | null, actor: Principal | null, method: string): AuditEvent {
  return {
    tenantId: proxy?.proxy.tenantId ?? (actor as Principal).tenantId,
    actor,
    entityType: 'proxy',
    entityId: proxy?.proxy.id ?? null,
    operation: 'proxy',
    message: `Request forwarded (${method})`,
  };
}

function allowed(principal: Principal | null): Principal {
  if (principal === null) {
    throw ApiError.forbidden(
      'This proxy has no application, so it cannot detokenize: set an application with token:use on the proxy.',
    );
  }
  return principal;
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function bodyOrNothing(req: Request): Request | undefined {
  return hasBody(req) ? req : undefined;
}

function single(value: string | string[] | undefined, name: string): string | undefined {
  if (Array.isArray(value)) {
    throw ApiError.badRequest(`Send the ${name} header once.`);
  }
  return value === undefined || value === '' ? undefined : value;
}

function queryKey(req: Request): string | undefined {
  const value = (req.query as Record<string, unknown>)[PROXY_KEY_QUERY];
  if (value === undefined || value === '') {
    return undefined;
  }
  if (typeof value !== 'string') {
    throw ApiError.badRequest(`Send the ${PROXY_KEY_QUERY} query parameter once.`);
  }
  return value;
}

function asText(value: unknown): string {
  if (value === null || value === undefined) {
    return '';
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}
