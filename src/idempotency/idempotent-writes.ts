import { RequestMethod, UseInterceptors } from '@nestjs/common';
import { METHOD_METADATA } from '@nestjs/common/constants';
import { IdempotencyInterceptor } from './idempotency.interceptor';

const WRITES: readonly RequestMethod[] = [RequestMethod.POST, RequestMethod.PUT, RequestMethod.PATCH];

/**
 * Class decorator: BT-IDEMPOTENCY-KEY (IdempotencyInterceptor) on each POST, PUT and PATCH route of the
 * controller, and on no other. It was a global interceptor; Nest then ran every GET (a reveal, a list,
 * /health) through its interceptor pipeline for nothing, a few percent of a reveal's CPU. Every controller
 * with such a route carries it (test/idempotency/coverage checks), except /proxy, whose forwarder handles
 * its keys itself.
 */
export function IdempotentWrites(): ClassDecorator {
  return (target) => {
    const prototype = target.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
      const handler = descriptor?.value as unknown;
      if (typeof handler !== 'function' || name === 'constructor') {
        continue;
      }
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (method !== undefined && WRITES.includes(method)) {
        UseInterceptors(IdempotencyInterceptor)(prototype, name, descriptor as PropertyDescriptor);
      }
    }
  };
}
