import type { Principal } from '../access/principal';
import { auditEvent, AuditEvent, tokensEvent } from '../audit/audit-event';
import type { Page } from '../common/pagination';
import type { TokenDto } from './dto/token.dto';
import { InsertOutcome, outcomeId } from './token-inserter.service';

/** The record of one create: the new token, or the existing one a deduplicating create returned. */
export function createdEvent(principal: Principal, outcome: InsertOutcome): AuditEvent {
  return 'duplicateOf' in outcome
    ? auditEvent(
        principal,
        'token',
        outcome.duplicateOf.id,
        'create',
        'Token deduplicated (existing token returned)',
      )
    : auditEvent(principal, 'token', outcome.inserted.row.id, 'create', 'Token created');
}

export function idsOf(page: Pick<Page<TokenDto>, 'data'>): string[] {
  return page.data.map((t) => t.id);
}

/** One record per /tokenize request, naming every token it created or found. */
export function tokenizedEvent(principal: Principal, outcomes: InsertOutcome[]): AuditEvent {
  return tokensEvent(principal, 'tokenize', 'Tokens created', outcomes.map(outcomeId));
}
