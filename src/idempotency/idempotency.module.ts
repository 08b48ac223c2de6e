import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { Idempotency } from './idempotency.service';
import { IdempotencyStore } from './idempotency.store';

/** Idempotency keys for every route (the interceptor) and for /proxy (Idempotency, used by its forwarder). */
@Global()
@Module({
  providers: [IdempotencyStore, Idempotency, { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor }],
  exports: [Idempotency, IdempotencyStore],
})
export class IdempotencyModule {}
