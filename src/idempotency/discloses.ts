import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Request } from 'express';
import type { CapturedResponse } from './captured-response';

export const DISCLOSES_METADATA = 'tv:idempotency-discloses';

/**
 * What a retry of a disclosing route gets. `rerun` (reads): no answer is kept, the retry runs again.
 * `recheck` (a reaction, whose code must run once): the answer is kept, and a retry runs the route's checks
 * and audit under today's rules, then gets the kept answer (see PendingReplay), never a second run.
 */
export type DisclosureReplay = 'rerun' | 'recheck';

/**
 * Marks a write route whose answer reveals token data (a detokenization, a search, a reaction). A retry with
 * the same BT-IDEMPOTENCY-KEY is never answered from the store alone: it is answered under today's tokens,
 * authentication and access rules, and audited like any read. test/idempotency/coverage checks that every
 * write route with a permission that reads token data carries it.
 */
export const Discloses = (options: { replay?: DisclosureReplay } = {}): MethodDecorator =>
  SetMetadata(DISCLOSES_METADATA, options.replay ?? 'rerun');

/** Proof, returned by the route, that it checked a replay under today's rules (PendingReplay.checked). */
export interface ReplayChecked {
  readonly replayChecked: true;
}

/**
 * A kept answer of a `recheck` route, handed to its handler (@PendingReplayOf). The handler runs its checks
 * and audit instead of the work, then returns `checked()`: the interceptor sends the kept answer only then.
 */
export class PendingReplay {
  private confirmed = false;

  constructor(readonly answer: CapturedResponse) {}

  checked(): ReplayChecked {
    this.confirmed = true;
    return { replayChecked: true };
  }

  get isChecked(): boolean {
    return this.confirmed;
  }
}

/** The request property that carries a PendingReplay from the interceptor to the handler. */
export interface ReplayingRequest extends Request {
  pendingReplay?: PendingReplay;
}

/** The kept answer to recheck, or undefined when the request is to run (first attempt, or no key). */
export function pendingReplayOf(_data: unknown, ctx: ExecutionContext): PendingReplay | undefined {
  return ctx.switchToHttp().getRequest<ReplayingRequest>().pendingReplay;
}

/** pendingReplayOf as a handler parameter: every `recheck` route takes it (test/idempotency/coverage). */
export const PendingReplayOf = createParamDecorator(pendingReplayOf);
