import { Injectable } from '@nestjs/common';
import { transformFor, uniformTransform } from '../access/access';
import type { Transform } from '../access/access-rules';
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
import { AuditPart, AuditService } from '../audit/audit.service';
import { AuditEvent, tokensEvent } from '../audit/audit-event';
import { TokensRepository } from './tokens.repository';
import { TokenPresentation } from './token-presentation.service';
import { Token } from './token.entity';
import { MAX_DETOKENIZED_CHARS, MAX_NESTING } from '../common/limits';
import { boundedName } from '../common/validation';

export const MAX_DETOKENIZED_TOKENS = 100;

/** A referenced token as its transform shows it: the whole token only where a `token:` reference wants it. */
interface Resolved {
  data: unknown;
  token?: TokenDto;
}

/** A caller's own records, written with the record of the tokens its detokenization used. */
export interface DetokenizationRecords {
  events: readonly AuditEvent[];
  /** Set once they are written: a failure after that (an expression that cannot be rendered) leaves them. */
  written: boolean;
}

/**
 * Replaces `{{ <id> }}` references in reactor arguments and proxy bodies with token data, for callers
 * holding token:use on each token's containers. All tokens are fetched in one query.
 */
@Injectable()
export class DetokenizeService {
  constructor(
    private readonly repository: TokensRepository,
    private readonly presentation: TokenPresentation,
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
   * As detokenizeUnrecorded, for a caller whose own records (`records.events`, known before the read) are
   * written with the record of the tokens used before any expression is rendered: in the read's own statement
   * when the principal's token:use transform is the same on every container, else right after the read.
   * `records.written` says whether a failure left them written.
   */
  async detokenizeRecorded(
    principal: Principal,
    value: unknown,
    records: DetokenizationRecords,
  ): Promise<unknown> {
    const found = new Map<string, TokenReference[]>();
    const resolved = await this.resolveRecorded(
      principal,
      collectReferences(value, new Map(), 0, found),
      records,
    );
    return this.walk(value, new Expansion(resolved, (r, token) => this.render(r, token), found), 0);
  }

  /** As detokenizeRecorded, of a text body (form-encoded or plain): every reference becomes text. */
  async detokenizeTextRecorded(
    principal: Principal,
    text: string,
    records: DetokenizationRecords,
  ): Promise<string> {
    const references = findReferences(text);
    const resolved = await this.resolveRecorded(principal, noteReferences(references), records);
    const expansion = new Expansion(
      resolved,
      (r, token) => this.render(r, token),
      new Map([[text, references]]),
    );
    const result = expansion.substitute(text);
    return typeof result === 'string' ? result : expansion.text(result);
  }

  private async resolveRecorded(
    principal: Principal,
    ids: Map<string, boolean>,
    records: DetokenizationRecords,
  ): Promise<Map<string, Resolved>> {
    checkCount(ids);
    const uniform = uniformTransform(principal, 'token:use');
    if (uniform !== null && ids.size > 0) {
      const resolved = await this.resolveAudited(principal, ids, uniform, records);
      if (resolved !== undefined) {
        return resolved;
      }
    }
    const { resolved, record } = await this.resolve(principal, ids);
    await this.audit.recordAll(record === null ? records.events : [record, ...records.events]);
    records.written = true;
    return resolved;
  }

  /**
   * The tokens and every record in one statement (TokensRepository.findLiveAudited), which writes none when a
   * token is unknown, deleted or expired. undefined when auditing is off or the statement failed.
   */
  private async resolveAudited(
    principal: Principal,
    ids: Map<string, boolean>,
    transform: Transform,
    records: DetokenizationRecords,
  ): Promise<Map<string, Resolved> | undefined> {
    const used = [...ids.keys()];
    const parts: AuditPart[] = [];
    for (const event of [usedEvent(principal, used, () => transform), ...records.events]) {
      const part = this.audit.recordPart(event);
      if (part === null) {
        return undefined;
      }
      parts.push(part);
    }
    const now = this.clock.now();
    if ([...ids.values()].includes(true)) {
      const rows = await this.repository.findLiveAudited(principal.tenantId, used, now, parts);
      if (rows === undefined) {
        return undefined;
      }
      const live = liveOrRefused(used, rows);
      records.written = true;
      return this.presentAll(live, ids, () => transform);
    }
    // No `token:` reference: only the data is shown, so only what presentedData needs is read.
    const rows = await this.repository.findLiveDataAudited(principal.tenantId, used, now, parts);
    if (rows === undefined) {
      return undefined;
    }
    const live = liveOrRefused(used, rows);
    records.written = true;
    const resolved = new Map<string, Resolved>();
    for (const row of live) {
      resolved.set(row.id, { data: await this.presentation.presentedData(row, transform) });
    }
    return resolved;
  }

  /** `ids`: each referenced id, and whether a `token:` reference wants the whole token (collectReferences). */
  private async resolve(
    principal: Principal,
    ids: Map<string, boolean>,
  ): Promise<{ resolved: Map<string, Resolved>; record: AuditEvent | null }> {
    checkCount(ids);
    const rows = await this.repository.findLiveMany(principal.tenantId, [...ids.keys()], this.clock.now());
    const found = new Set(rows.map((row) => row.id));
    const missing = [...ids.keys()].filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw unknownTokens(missing);
    }
    const transforms = new Map<string, Transform>();
    for (const row of rows) {
      const transform = transformFor(principal, 'token:use', row.containers);
      if (transform === null) {
        throw ApiError.forbidden('No access rule grants token:use on a referenced token.');
      }
      transforms.set(row.id, transform);
    }
    const transformOf = (id: string): Transform => transforms.get(id) as Transform;
    const resolved = await this.presentAll(rows, ids, transformOf);
    const used = rows.map((row) => row.id);
    return { resolved, record: used.length > 0 ? usedEvent(principal, used, transformOf) : null };
  }

  /** Each token as its transform shows it: the mask is evaluated only where it shows. */
  private async presentAll(
    rows: Token[],
    ids: Map<string, boolean>,
    transformOf: (id: string) => Transform,
  ): Promise<Map<string, Resolved>> {
    const resolved = new Map<string, Resolved>();
    for (const row of rows) {
      const transform = transformOf(row.id);
      if (ids.get(row.id) === true) {
        const token = await this.presentation.present(row, undefined, transform);
        resolved.set(row.id, { data: token.data, token });
      } else {
        resolved.set(row.id, { data: await this.presentation.presentedData(row, transform) });
      }
    }
    return resolved;
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

  private render(reference: TokenReference, token: Resolved): unknown {
    const value = reference.wholeToken ? token.token : (token.data ?? null);
    if (reference.filters === '') {
      return value;
    }
    try {
      return this.engine.renderFiltered(value, reference.filters);
    } catch (err) {
      throw expressionFieldError('expression', err);
    }
  }
}

function checkCount(ids: Map<string, boolean>): void {
  if (ids.size > MAX_DETOKENIZED_TOKENS) {
    throw ApiError.badRequest(`At most ${MAX_DETOKENIZED_TOKENS} tokens can be detokenized in one request.`);
  }
}

/** The rows of an audited read, each live (its records written), or the read refused naming the unknown ones. */
function liveOrRefused<T>(used: readonly string[], rows: readonly (T | null)[]): T[] {
  const live = rows.filter((row): row is T => row !== null);
  if (live.length < used.length) {
    throw unknownTokens(used.filter((_, i) => rows[i] === null));
  }
  return live;
}

function unknownTokens(missing: string[]): ApiError {
  return ApiError.badRequest(`Token expressions refer to ${missing.length} unknown token(s).`, {
    // Bounded as member names are: a card number written as a reference is not echoed.
    tokens: missing.map((id) => `unknown token id ${boundedName(id)}`),
  });
}

/** The record of the tokens a detokenization used, each named with its transform. */
function usedEvent(principal: Principal, used: string[], transformOf: (id: string) => Transform): AuditEvent {
  const decisions = used.map((id) => `${id} (${transformOf(id)})`);
  return tokensEvent(principal, 'detokenize', 'Tokens used', used, decisions);
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
    private readonly resolved: Map<string, Resolved>,
    private readonly render: (reference: TokenReference, token: Resolved) => unknown,
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
      value = this.render(reference, this.resolved.get(reference.id) as Resolved);
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
