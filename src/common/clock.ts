import { Global, Injectable, Module } from '@nestjs/common';

/** The time, behind an injectable so tests move it instead of sleeping. Queries take it as a parameter. */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}

/** The clock, which every module may inject. */
@Global()
@Module({ providers: [Clock], exports: [Clock] })
export class ClockModule {}
