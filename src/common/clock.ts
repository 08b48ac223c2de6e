import { Global, Injectable, Module } from '@nestjs/common';
import { WriteCounter } from './write-counter';

/** The time, behind an injectable so tests move it instead of sleeping. Queries take it as a parameter. */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}

/** Process-wide side-effect holders every module may inject. */
@Global()
@Module({ providers: [Clock, WriteCounter], exports: [Clock, WriteCounter] })
export class ClockModule {}
