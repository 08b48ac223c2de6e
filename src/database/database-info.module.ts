import { DynamicModule, Global, Module } from '@nestjs/common';
import { DatabaseRuntime } from './database';

export const DATABASE_RUNTIME = Symbol('DATABASE_RUNTIME');

/** Makes the opened database (embedded or PostgreSQL, its options) injectable. */
@Global()
@Module({})
export class DatabaseInfoModule {
  static forRoot(runtime: DatabaseRuntime): DynamicModule {
    return {
      module: DatabaseInfoModule,
      providers: [{ provide: DATABASE_RUNTIME, useValue: runtime }],
      exports: [DATABASE_RUNTIME],
    };
  }
}
