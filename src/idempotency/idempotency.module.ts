import { Global, Module } from '@nestjs/common';
import { AtomicWrites } from './atomic-writes';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';
import { Idempotency } from './idempotency.service';
import { IdempotencyStore } from './idempotency.store';

/**
 * Idempotency keys: on the write routes of each controller marked @IdempotentWrites() (the interceptor), and on
 * /proxy (Idempotency, used by its forwarder).
 */
@Global()
@Module({
  providers: [IdempotencyKeysRepository, IdempotencyStore, Idempotency, AtomicWrites],
  exports: [Idempotency, IdempotencyStore, AtomicWrites],
})
export class IdempotencyModule {}
