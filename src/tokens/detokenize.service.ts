import { Injectable } from '@nestjs/common';
import { transformFor } from '../auth/access';
import { Principal } from '../auth/principal';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { ExpressionEngine, expressionFieldError } from '../expressions';
import {
  collectReferencedIds,
  findReferences,
  substitute,
  TokenReference,
} from '../expressions/detokenization';
import { TokenDto } from './dto/token.dto';
import { TokensRepository } from './tokens.repository';
import { TokensService } from './tokens.service';
import { MAX_NESTING } from '../common/limits';

export const MAX_DETOKENIZED_TOKENS = 100;

/**
 * Replaces `{{ <id> }}` references in reactor arguments and proxy bodies with token data, for callers
 * holding token:use on each token's containers. All tokens are fetched in one query.
 */
@Injectable()
export class DetokenizeService {
  constructor(
    private readonly repository: TokensRepository,
    private readonly tokens: TokensService,
    private readonly engine: ExpressionEngine,
    private readonly clock: Clock,
  ) {}

  /** Any JSON value: strings anywhere inside are detokenized, object keys are not. */
  async detokenize(principal: Principal, value: unknown): Promise<unknown> {
    const resolved = await this.resolve(principal, collectReferencedIds(value));
    return this.walk(value, resolved, 0);
  }

  /** A text body (form-encoded or plain): every reference becomes text. */
  async detokenizeText(principal: Principal, text: string): Promise<string> {
    const resolved = await this.resolve(principal, new Set(findReferences(text).map((r) => r.id)));
    const result = substitute(
      text,
      (r) => this.render(r, resolved),
      (v) => this.asText(v),
    );
    return typeof result === 'string' ? result : this.asText(result);
  }

  private async resolve(principal: Principal, ids: Set<string>): Promise<Map<string, TokenDto>> {
    if (ids.size > MAX_DETOKENIZED_TOKENS) {
      throw ApiError.badRequest(
        `At most ${MAX_DETOKENIZED_TOKENS} tokens can be detokenized in one request.`,
      );
    }
    const rows = await this.repository.findLiveMany(principal.tenantId, [...ids], this.clock.now());
    const found = new Map(rows.map((row) => [row.id, row]));
    const missing = [...ids].filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw ApiError.badRequest(`Token expressions refer to ${missing.length} unknown token(s).`, {
        tokens: missing.map((id) => `unknown token id ${id}`),
      });
    }
    const resolved = new Map<string, TokenDto>();
    for (const row of rows) {
      const transform = transformFor(principal, 'token:use', row.containers);
      if (transform === null) {
        throw ApiError.forbidden('No access rule grants token:use on a referenced token.');
      }
      resolved.set(row.id, await this.tokens.present(row, undefined, transform));
    }
    return resolved;
  }

  private walk(value: unknown, resolved: Map<string, TokenDto>, depth: number): unknown {
    if (typeof value === 'string') {
      return substitute(
        value,
        (r) => this.render(r, resolved),
        (v) => this.asText(v),
      );
    }
    if (Array.isArray(value) && depth < MAX_NESTING) {
      return value.map((v) => this.walk(v, resolved, depth + 1));
    }
    if (typeof value === 'object' && value !== null && depth < MAX_NESTING) {
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, this.walk(v, resolved, depth + 1)]),
      );
    }
    return value;
  }

  private render(reference: TokenReference, resolved: Map<string, TokenDto>): unknown {
    const token = resolved.get(reference.id) as TokenDto;
    const value = reference.wholeToken ? token : (token.data ?? null);
    if (reference.filters === '') {
      return value;
    }
    try {
      return this.engine.render(`{{ value ${reference.filters} }}`, { value });
    } catch (err) {
      throw expressionFieldError('expression', err);
    }
  }

  private asText(value: unknown): string {
    if (value === null || value === undefined) {
      return '';
    }
    return typeof value === 'string' ? value : JSON.stringify(value);
  }
}
