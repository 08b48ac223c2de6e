import { Injectable } from '@nestjs/common';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Database } from '../database/database.service';
import { TokenDto } from './dto/token.dto';
import { DedupRateLimit } from './dedup-rate-limit';
import { createdEvent } from './token-audit';
import { TokenInserter } from './token-inserter.service';
import { TokenPresentation } from './token-presentation.service';
import { TokensService } from './tokens.service';

/** A token intent's type and data, opened, as the token intents module hands them over. */
export interface OpenedTokenIntent {
  id: string;
  type: string;
  data: unknown;
}

/** What the token intents module lends this one (it builds on tokens, so it registers itself at boot). */
export interface TokenIntentSource {
  /** The tenant's live intent, opened; null for an unknown, expired, converted or malformed id. */
  open(tenantId: string, id: string): Promise<OpenedTokenIntent | null>;
  /** Deletes the intent in the open transaction and records it; false when it is gone already. */
  consume(principal: Principal, id: string): Promise<boolean>;
}

const GONE = 'names no token intent of this tenant (unknown, expired, or converted already)';

/** POST /tokens with `token_intent_id`: the token made of the intent's data, and the intent gone, together. */
@Injectable()
export class TokenIntentConversion {
  private source: TokenIntentSource | null = null;

  constructor(
    private readonly tokens: TokensService,
    private readonly inserter: TokenInserter,
    private readonly presentation: TokenPresentation,
    private readonly dedup: DedupRateLimit,
    private readonly db: Database,
  ) {}

  register(source: TokenIntentSource): void {
    this.source = source;
  }

  async create(principal: Principal, body: Record<string, unknown>): Promise<TokenDto> {
    const { token_intent_id: intentId, ...rest } = body;
    if (rest.type !== undefined || rest.data !== undefined) {
      throw ApiError.field(
        'token_intent_id',
        "must not be sent with type or data: the token takes the intent's",
      );
    }
    const source = this.source;
    const intent =
      typeof intentId === 'string' && source !== null
        ? await source.open(principal.tenantId, intentId)
        : null;
    if (source === null || intent === null) {
      throw ApiError.field('token_intent_id', GONE);
    }
    await this.dedup.take(principal, rest.deduplicate_token === true ? 1 : 0);
    const prepared = await this.tokens.prepare(principal, { ...rest, type: intent.type, data: intent.data });
    // Two conversions of one intent race to delete it: the loser's token rolls back with its failed delete.
    const outcome = await this.db.transaction(async () => {
      if (!(await source.consume(principal, intent.id))) {
        throw ApiError.field('token_intent_id', GONE);
      }
      return this.inserter.insertOne(prepared, (inserted) => createdEvent(principal, inserted));
    });
    return this.presentation.presentOutcome(principal, outcome);
  }
}
