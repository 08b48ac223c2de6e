import type { InjectionToken, OptionalFactoryDependency, Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { NestAppFactory } from '../../src/app';

/** A provider of the app replaced by a test double, in every module that declares it. */
export type ProviderOverride = { provide: InjectionToken } & (
  | { useValue: unknown }
  | { useClass: Type<unknown> }
  | {
      useFactory: (...args: never[]) => unknown;
      inject?: (InjectionToken | OptionalFactoryDependency)[];
    }
);

/**
 * Builds the app with Nest's TestingModule, which replaces each overridden provider where it is declared, so
 * the double reaches every consumer, those in the declaring module too, and `app.get` returns it. (A global
 * module of doubles would not: providers of a consumer's own module and globals registered earlier win.)
 */
export function overridingFactory(overrides: readonly ProviderOverride[]): NestAppFactory {
  return async (root, options) => {
    const builder = Test.createTestingModule({ imports: [root] });
    for (const override of overrides) {
      const by = builder.overrideProvider(override.provide);
      if ('useValue' in override) {
        by.useValue(override.useValue);
      } else if ('useClass' in override) {
        by.useClass(override.useClass);
      } else {
        by.useFactory({ factory: override.useFactory, inject: override.inject });
      }
    }
    const compiled = await builder.compile();
    for (const { provide } of overrides) {
      // An override of a token nothing declares is silently dropped by Nest: fail instead.
      try {
        compiled.get(provide, { strict: false });
      } catch {
        await compiled.close();
        throw new Error(`No provider of ${tokenName(provide)} in the app: nothing to override`);
      }
    }
    return compiled.createNestApplication<NestExpressApplication>(options);
  };
}

function tokenName(token: InjectionToken): string {
  return typeof token === 'function' ? token.name : String(token);
}
