import { Injectable } from '@nestjs/common';
import { transformFor } from '../access/access';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { ExpressionEngine, expressionFieldError } from '../expressions';
import {
  collectReferences,
  findReferences,
  noteReferences,
  substitute,
  TokenReference,
} from '../expressions/detokenization';
import { TokenDto } from './dto/token.dto';
import { AuditService } from '../audit/audit.service';
import { AuditEvent, tokensEvent } from '../audit/audit-event';
import { TokensRepository } from './tokens.repository';
import { TokensService } from './tokens.service';
import { MAX_DETOKENIZED_CHARS, MAX_NESTING } from '../common/limits';
import { boundedName } from '../common/validation';

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
    private readonly audit: AuditService,
  ) {}

  /** Any JSON value: strings anywhere inside are detokenized, object keys are not. */
  async detokenize(principal: Principal, value: unknown): Promise<unknown> {
    const { value: detokenized, record } = await this.detokenizeUnrecorded(principal, value);
    if (record !== null) {
      await this.audit.record(record);
    }
    return detokenized;
  }

  /**
   * As detokenize, but the audit record of the tokens used (null when none was) is the caller's to write,
   * together with its own, before the data leaves the vault or reaches tenant code.
   */
  async detokenizeUnrecorded(
    principal: Principal,
    value: unknown,
  ): Promise<{ value: unknown; record: AuditEvent | null }> {
    const found = new Map<string, TokenReference[]>();
    const { resolved, record } = await this.resolve(principal, collectReferences(value, new Map(), 0, found));
    return {
      value: this.walk(value, new Expansion(resolved, (r, token) => this.render(r, token), found), 0),
      record,
    };
  }

  /**
   * A text body (form-encoded or plain): every reference becomes text. As detokenizeUnrecorded, the record
   * of the tokens used is the caller's to write.
   */
  async detokenizeTextUnrecorded(
    principal: Principal,
    text: string,
  ): Promise<{ value: string; record: AuditEvent | null }> {
    const references = findReferences(text);
    const { resolved, record } = await this.resolve(principal, noteReferences(references));
    const expansion = new Expansion(
      resolved,
      (r, token) => this.render(r, token),
      new Map([[text, references]]),
    );
    const result = expansion.substitute(text);
    return { value: typeof result === 'string' ? result : expansion.text(result), record };
  }

  /** `ids`: each referenced id, and whether a `token:` reference wants the whole token (collectReferences). */
  private async resolve(
    principal: Principal,
    ids: Map<string, boolean>,
  ): Promise<{ resolved: Map<string, TokenDto>; record: AuditEvent | null }> {
    if (ids.size > MAX_DETOKENIZED_TOKENS) {
      throw ApiError.badRequest(
        `At most ${MAX_DETOKENIZED_TOKENS} tokens can be detokenized in one request.`,
      );
    }
    const rows = await this.repository.findLiveMany(principal.tenantId, [...ids.keys()], this.clock.now());
    const found = new Map(rows.map((row) => [row.id, row]));
    const missing = [...ids.keys()].filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw ApiError.badRequest(`Token expressions refer to ${missing.length} unknown token(s).`, {
        // Bounded as member names are: a card number written as a reference is not echoed.
        tokens: missing.map((id) => `unknown token id ${boundedName(id)}`),
      });
    }
    const resolved = new Map<string, TokenDto>();
    const used: string[] = [];
    const decisions: string[] = [];
    for (const row of rows) {
      const transform = transformFor(principal, 'token:use', row.containers);
      if (transform === null) {
        throw ApiError.forbidden('No access rule grants token:use on a referenced token.');
      }
      // The mask is evaluated only where it shows: in a whole token, or as the data of a masked token.
      const mask = ids.get(row.id) === true || transform === 'mask';
      resolved.set(row.id, await this.tokens.present(row, undefined, transform, { mask }));
      used.push(row.id);
      decisions.push(`${row.id} (${transform})`);
    }
    const record =
      decisions.length > 0 ? tokensEvent(principal, 'detokenize', 'Tokens used', used, decisions) : null;
    return { resolved, record };
  }

  private walk(value: unknown, expansion: Expansion, depth: number): unknown {
    if (typeof value === 'string') {
      return expansion.substitute(value);
    }
    if (Array.isArray(value) && depth < MAX_NESTING) {
      return value.map((v) => this.walk(v, expansion, depth + 1));
    }
    if (typeof value === 'object' && value !== null && depth < MAX_NESTING) {
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, this.walk(v, expansion, depth + 1)]),
      );
    }
    return value;
  }

  private render(reference: TokenReference, token: TokenDto): unknown {
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
}

/**
 * The references of one detokenization: each distinct reference (id, form and filters) is rendered once
 * however often it occurs, and every occurrence is charged its size as text, so the output is refused
 * (413) once it would pass MAX_DETOKENIZED_CHARS, before it is built.
 */
class Expansion {
  private readonly rendered = new Map<string, unknown>();
  private readonly texts = new Map<unknown, string>();
  private left = MAX_DETOKENIZED_CHARS;

  constructor(
    private readonly resolved: Map<string, TokenDto>,
    private readonly render: (reference: TokenReference, token: TokenDto) => unknown,
    /** The references already found in the strings to substitute (collectReferences). */
    private readonly found: Map<string, TokenReference[]>,
  ) {}

  substitute(text: string): unknown {
    return substitute(
      text,
      (r) => this.value(r),
      (v) => this.text(v),
      this.found.get(text),
    );
  }

  /** How a value reads inside text (strings as they are, other values as JSON); computed once per value. */
  text(value: unknown): string {
    let text = this.texts.get(value);
    if (text === undefined) {
      text =
        value === null || value === undefined
          ? ''
          : typeof value === 'string'
            ? value
            : JSON.stringify(value);
      this.texts.set(value, text);
    }
    return text;
  }

  private value(reference: TokenReference): unknown {
    // Ids hold no whitespace, so the space separates the form from the id.
    const key = `${reference.wholeToken ? 'token' : 'data'} ${reference.id}${reference.filters}`;
    let value = this.rendered.get(key);
    if (!this.rendered.has(key)) {
      value = this.render(reference, this.resolved.get(reference.id) as TokenDto);
      this.rendered.set(key, value);
    }
    this.left -= this.text(value).length;
    if (this.left < 0) {
      throw new ApiError(
        413,
        `Detokenized values would make the request larger than ${MAX_DETOKENIZED_CHARS.toLocaleString('en-US')} characters.`,
      );
    }
    return value;
  }
}
