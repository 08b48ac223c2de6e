import { SetMetadata } from '@nestjs/common';

export const DISCLOSES_METADATA = 'tv:idempotency-discloses';

/**
 * Marks a write route whose answer reveals token data (a detokenization, a search, a reaction). Its answer is
 * never kept for BT-IDEMPOTENCY-KEY: only the decision to run it again is, so a retry is answered under
 * today's tokens, authentication and access rules, and audited like any read. test/idempotency/coverage
 * checks that every write route with a permission that reads token data carries it.
 */
export const Discloses = (): MethodDecorator => SetMetadata(DISCLOSES_METADATA, true);
