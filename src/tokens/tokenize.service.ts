import { tokenizedEvent } from './token-audit';
import { Inject, Injectable } from '@nestjs/common';
import { Principal } from '../access/principal';
import { ApiError, FieldErrors } from '../common/api-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { addError } from '../common/field-errors';
import { nestedDeeperThan } from '../common/nesting';
import { MAX_DTO_DEPTH } from '../common/validation';
import { DedupRateLimit } from './dedup-rate-limit';
import { outcomeId, PreparedToken, TokenInserter } from './token-inserter.service';
import { TokenPresentation } from './token-presentation.service';
import { TokensService } from './tokens.service';

interface Slot {
  /** Where the request held it, for error paths. */
  path: string;
  definition: Record<string, unknown>;
  /** A definition is answered with the token object, a primitive leaf with the token id. */
  kind: 'definition' | 'leaf';
}

const SLOT = Symbol('slot');
type Shape = null | { [SLOT]: number } | Shape[] | { [key: string]: Shape };

const MAX_DEPTH = 32;

/** POST /tokenize: every primitive leaf and token definition of a JSON body becomes a token, all or nothing. */
@Injectable()
export class TokenizeService {
  constructor(
    private readonly tokens: TokensService,
    private readonly inserter: TokenInserter,
    private readonly presentation: TokenPresentation,
    private readonly dedupLimit: DedupRateLimit,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async tokenize(principal: Principal, body: unknown): Promise<unknown> {
    const slots: Slot[] = [];
    const shape = collect(body, '', { slots, max: this.config.tokenizeMaxTokens }, 0);
    await this.dedupLimit.take(
      principal,
      slots.filter((s) => s.definition.deduplicate_token === true).length,
    );
    const prepared = await this.prepareAll(principal, slots);
    const outcomes = await this.inserter.insertAll(prepared, (inserted) =>
      tokenizedEvent(principal, inserted),
    );
    // A leaf is answered with its id alone: presenting it (mask, transform) would be thrown away.
    const results = await Promise.all(
      outcomes.map(async (o, i) =>
        slots[i].kind === 'leaf' ? outcomeId(o) : this.presentation.presentOutcome(principal, o),
      ),
    );
    return rebuild(shape, (i) => results[i]);
  }

  /** Validates every slot first so one response names every bad path; nothing is written before that. */
  private async prepareAll(principal: Principal, slots: Slot[]): Promise<PreparedToken[]> {
    const errors: FieldErrors = {};
    const prepared: PreparedToken[] = [];
    // One time and one key lookup for every token of the request, not one per leaf.
    const batch = this.tokens.writeBatch(principal.tenantId);
    for (const slot of slots) {
      try {
        prepared.push(await this.tokens.prepare(principal, slot.definition, slot.path, batch));
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 400) {
          throw err;
        }
        // addError, not Object.assign: a "__proto__" path would set the prototype instead, the failure would be
        // lost and the request would answer 200 having created nothing
        const entries = Object.entries(err.errors ?? {});
        if (entries.length === 0) {
          addError(errors, slot.path === '' ? 'body' : slot.path, err.detail);
        }
        for (const [path, messages] of entries) {
          messages.forEach((message) => addError(errors, path, message));
        }
      }
    }
    if (Object.keys(errors).length > 0) {
      throw ApiError.validation(errors);
    }
    return prepared;
  }
}

/** The slots found so far and how many the request may hold. */
interface Walk {
  slots: Slot[];
  max: number;
}

/**
 * The request's shape with a slot per token to create. Counts as it goes and stops at the first slot past
 * the limit, so an oversized body costs no more than the allowed part of it.
 */
function collect(value: unknown, path: string, walk: Walk, depth: number): Shape {
  const at = path === '' ? 'body' : path;
  if (depth > MAX_DEPTH) {
    throw ApiError.field(at, `is nested deeper than ${MAX_DEPTH} levels`);
  }
  if (value === null || value === undefined) {
    return null;
  }
  const object = value as Record<string, unknown>;
  const leaf = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
  if (leaf || (!Array.isArray(value) && 'type' in object && ('data' in object || 'encrypted' in object))) {
    if (walk.slots.length >= walk.max) {
      throw ApiError.badRequest(`At most ${walk.max} tokens can be created in one request.`);
    }
    // A definition is read like a POST /tokens body, with the same depth limit (deeper: a stack overflow).
    if (!leaf && nestedDeeperThan(object, MAX_DTO_DEPTH)) {
      throw ApiError.field(at, `is nested deeper than ${MAX_DTO_DEPTH} levels`);
    }
    const definition = leaf ? { type: 'token', data: value } : object;
    walk.slots.push({ path, definition, kind: leaf ? 'leaf' : 'definition' });
    return { [SLOT]: walk.slots.length - 1 };
  }
  if (Array.isArray(value)) {
    return value.map((item, i) => collect(item, `${path}[${i}]`, walk, depth + 1));
  }
  return Object.fromEntries(
    Object.entries(object).map(([key, item]) => [
      key,
      collect(item, path === '' ? key : `${path}.${key}`, walk, depth + 1),
    ]),
  );
}

function rebuild(shape: Shape, answer: (slot: number) => unknown): unknown {
  if (shape === null) {
    return null;
  }
  if (Array.isArray(shape)) {
    return shape.map((item) => rebuild(item, answer));
  }
  if (SLOT in shape) {
    return answer(shape[SLOT]);
  }
  return Object.fromEntries(Object.entries(shape).map(([key, item]) => [key, rebuild(item, answer)]));
}
