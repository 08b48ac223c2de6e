import { RequestMethod } from '@nestjs/common';
import { INTERCEPTORS_METADATA, METHOD_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { IdempotencyInterceptor } from '../../src/idempotency/idempotency.interceptor';
import { ProxyForwarderController } from '../../src/proxies/proxy-forwarder.controller';
import { TestContext } from '../support/test-app';

const WRITES = [RequestMethod.POST, RequestMethod.PUT, RequestMethod.PATCH];

/**
 * The idempotency interceptor is put on routes by @IdempotentWrites(), controller by controller: this walks
 * every route the application serves, so a new controller without it (its writes without BT-IDEMPOTENCY-KEY)
 * fails here, as does a read route that pays for the interceptor.
 */
describe('BT-IDEMPOTENCY-KEY coverage', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('is on every POST, PUT and PATCH route but /proxy, and on no other route', () => {
    const missing: string[] = [];
    const extra: string[] = [];
    let writes = 0;
    for (const module of ctx.get(ModulesContainer).values()) {
      for (const wrapper of module.controllers.values()) {
        const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
        if (controller === null) {
          continue;
        }
        const prototype = controller.prototype as Record<string, unknown>;
        for (const name of Object.getOwnPropertyNames(prototype)) {
          const handler = prototype[name];
          if (typeof handler !== 'function') {
            continue;
          }
          const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
          if (method === undefined) {
            continue;
          }
          const route = `${controller.name}.${name}`;
          const has = ((Reflect.getMetadata(INTERCEPTORS_METADATA, handler) ?? []) as unknown[]).includes(
            IdempotencyInterceptor,
          );
          const wanted = WRITES.includes(method) && controller !== ProxyForwarderController;
          writes += wanted ? 1 : 0;
          if (wanted && !has) {
            missing.push(route);
          } else if (!wanted && has) {
            extra.push(route);
          }
        }
      }
    }
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    expect(writes).toBeGreaterThanOrEqual(29);
  });
});
