import { Injectable } from '@nestjs/common';
import { ApplicationPrincipals } from '../applications/application-principals.service';
import { ApiError } from '../common/api-error';
import { MAX_NESTING } from '../common/limits';
import { nestedDeeperThan } from '../common/nesting';
import { BODY_LIMIT_BYTES } from '../common/request-body';
import { setAtPath } from '../common/set-at-path';
import { ExpressionEngine, expressionMessage } from '../expressions';
import { TokensService } from '../tokens/tokens.service';
import type { StoredTransform } from './dto/proxy-transform.dto';
import type { TransformState } from './builtin-transforms';
import type { LoadedProxy } from './loaded-proxy';
import { bodyForCode, bodyKind } from './proxy-body';

/** The tokens the `tokenize` transforms of one list created so far, by identifier. */
export type CreatedTokens = Map<string, unknown>;

/** `{{ transform_identifier: '<identifier>' <filters> }}` in an `append_*` value. */
const TRANSFORM_IDENTIFIER =
  /\{\{\s*transform_identifier\s*:\s*'([A-Za-z0-9_-]{1,100})'\s*((?:\|[^}]*)?)\}\}/g;

/**
 * The `tokenize` transform: renders `options.token` over the body (`req` or `res`), creates the token as
 * `POST /tokens` would with the proxy's application, and puts its id at `options.location` when given.
 */
@Injectable()
export class TokenizeTransform {
  constructor(
    private readonly applications: ApplicationPrincipals,
    private readonly tokens: TokensService,
    private readonly engine: ExpressionEngine,
  ) {}

  async apply(
    proxy: LoadedProxy,
    side: 'request' | 'response',
    step: StoredTransform,
    state: TransformState,
    created: CreatedTokens,
  ): Promise<TransformState> {
    const { tenantId, applicationId } = proxy.proxy;
    const principal =
      applicationId === null ? null : await this.applications.principalFor(tenantId, applicationId);
    if (principal === null) {
      throw ApiError.forbidden(
        'This proxy has no application, so its tokenize transform cannot create tokens.',
      );
    }
    if (!principal.permissions.has('token:create')) {
      throw ApiError.forbidden("The proxy's application does not have token:create.");
    }
    const contentType = state.headers['content-type'];
    const body = state.body ?? Buffer.alloc(0);
    const parsed = bodyForCode(body, bodyKind(Array.isArray(contentType) ? contentType[0] : contentType));
    let request: unknown;
    try {
      request = this.engine.renderDeep(step.options?.token ?? {}, {
        [side === 'request' ? 'req' : 'res']: parsed,
      });
    } catch (err) {
      throw ApiError.badRequest(
        `The tokenize transform's token could not be rendered: ${expressionMessage(err, 'an expression failed')}.`,
      );
    }
    checkRendered(request);
    const token = (await this.tokens.create(principal, request as Record<string, unknown>)) as { id: string };
    if (step.options?.identifier !== undefined) {
      created.set(step.options.identifier, token);
    }
    const location = step.options?.location;
    if (location === undefined) {
      return state;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ApiError(
        side === 'request' ? 400 : 502,
        `The ${side} body is not a JSON object: the tokenize transform cannot put the token id in it.`,
      );
    }
    setAtPath(parsed as Record<string, unknown>, location.replace(/^\$\./, '').split('.'), token.id);
    return { ...state, body: Buffer.from(JSON.stringify(parsed)) };
  }

  /**
   * An `append_*` value with each `{{ transform_identifier: '<identifier>' | <filters> }}` replaced by that
   * token (as its application reads it) through the filters; an identifier no transform created is empty.
   */
  resolve(value: string, created: CreatedTokens): string {
    if (!value.includes('transform_identifier')) {
      return value;
    }
    return value.replace(TRANSFORM_IDENTIFIER, (_match, identifier: string, filters: string) => {
      if (!created.has(identifier)) {
        return '';
      }
      const token = created.get(identifier);
      let selected: unknown;
      try {
        selected = filters.trim() === '' ? token : this.engine.renderFiltered(token, filters);
      } catch (err) {
        throw ApiError.badRequest(
          `A transform_identifier expression could not be rendered: ${expressionMessage(err, 'a filter failed')}.`,
        );
      }
      if (selected === undefined || selected === null) {
        return '';
      }
      return typeof selected === 'string' ? selected : JSON.stringify(selected);
    });
  }
}

/** A rendered token is held to what POST /tokens accepts: its body limit and nesting depth. */
function checkRendered(request: unknown): void {
  if (nestedDeeperThan(request, MAX_NESTING)) {
    throw ApiError.badRequest(`The tokenize transform's token is nested deeper than ${MAX_NESTING} levels.`);
  }
  if (Buffer.byteLength(JSON.stringify(request) ?? '') > BODY_LIMIT_BYTES) {
    throw ApiError.badRequest(
      `The tokenize transform's token is larger than the ${BODY_LIMIT_BYTES / 1024 / 1024} MB a token may be.`,
    );
  }
}
