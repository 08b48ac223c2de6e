import { RequestMethod } from '@nestjs/common';
import { INTERCEPTORS_METADATA, METHOD_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { REQUIRED_PERMISSIONS } from '../../src/access/decorators';
import type { Permission } from '../../src/access/permissions';
import { DISCLOSES_METADATA, DisclosureReplay, pendingReplayOf } from '../../src/idempotency/discloses';
import { IdempotencyInterceptor } from '../../src/idempotency/idempotency.interceptor';
import { ProxyForwarderController } from '../../src/proxies/proxy-forwarder.controller';
import { TestContext } from '../support/test-app';

const WRITES = [RequestMethod.POST, RequestMethod.PUT, RequestMethod.PATCH];
/** The permissions through which an application sees token data (src/access/access.ts). */
const DATA_PERMISSIONS: Permission[] = ['token:read', 'token:search', 'token:use'];
/** Write routes with such a permission whose answer shows no token data, and why. */
const DISCLOSE_NOTHING: Record<string, string> = {
  'ReactorsController.reactAsync': 'answers the run id; the result is read with GET under the rules of then',
};

/** Write routes that refuse BT-IDEMPOTENCY-KEY (400) instead of keeping their answer, and why. */
const REFUSE_KEY: Record<string, string> = {
  'DocumentsController.upload':
    'stores each chunk as it streams in; one transaction for the whole upload would be held at the client pace',
};

interface Route {
  name: string;
  method: RequestMethod;
  handler: object;
  controller: unknown;
}

/** Every route the application serves, as ControllerName.method. */
function routes(ctx: TestContext): Route[] {
  const found: Route[] = [];
  for (const module of ctx.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (controller === null) {
        continue;
      }
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        const method =
          typeof handler === 'function'
            ? (Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined)
            : undefined;
        if (method !== undefined) {
          found.push({ name: `${controller.name}.${name}`, method, handler: handler as object, controller });
        }
      }
    }
  }
  return found;
}

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
    for (const { name, method, handler, controller } of routes(ctx)) {
      const has = ((Reflect.getMetadata(INTERCEPTORS_METADATA, handler) ?? []) as unknown[]).includes(
        IdempotencyInterceptor,
      );
      const wanted =
        WRITES.includes(method) && controller !== ProxyForwarderController && REFUSE_KEY[name] === undefined;
      writes += wanted ? 1 : 0;
      if (wanted && !has) {
        missing.push(name);
      } else if (!wanted && has) {
        extra.push(name);
      }
    }
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    expect(writes).toBeGreaterThanOrEqual(29);
  });

  // Issue 37: a write route that reads token data keeps no answer (@Discloses); a new one that forgets fails here.
  it('marks every write route that can reveal token data as disclosing, and no other', () => {
    const unmarked: string[] = [];
    const marked: string[] = [];
    for (const { name, method, handler } of routes(ctx)) {
      const permissions = (Reflect.getMetadata(REQUIRED_PERMISSIONS, handler) ?? []) as Permission[];
      const reads =
        WRITES.includes(method) &&
        permissions.some((p) => DATA_PERMISSIONS.includes(p)) &&
        DISCLOSE_NOTHING[name] === undefined;
      const replay = Reflect.getMetadata(DISCLOSES_METADATA, handler) as DisclosureReplay | undefined;
      if (reads && replay === undefined) {
        unmarked.push(name);
      } else if (replay !== undefined) {
        marked.push(`${name} ${replay}`);
      }
    }
    expect(unmarked).toEqual([]);
    // A `recheck` route must be handed its kept answer, or it would run its work again before the replay.
    for (const { name, handler, controller } of routes(ctx)) {
      if (Reflect.getMetadata(DISCLOSES_METADATA, handler) === 'recheck') {
        const method = name.slice(name.indexOf('.') + 1);
        const args = Object.values(
          (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller as object, method) ?? {}) as Record<
            string,
            { factory?: unknown }
          >,
        );
        expect([name, args.some((a) => a.factory === pendingReplayOf)]).toEqual([name, true]);
      }
    }
    // Reads run again; a reaction (whose code must run once) is rechecked before its kept answer is replayed.
    expect(marked.sort()).toEqual([
      'DetokenizeController.run rerun',
      'ReactorsController.react recheck',
      'TokensController.search rerun',
      'TokensV2Controller.search rerun',
    ]);
  });
});
