import { Global, Module } from '@nestjs/common';
import { RateLimitCountersRepository } from './rate-limit-counters.repository';
import { RateLimits } from './rate-limits.service';

/** The shared rate limits; global, like metrics, so the guard, /proxy, invitations and tokens reach them. */
@Global()
@Module({
  providers: [RateLimits, RateLimitCountersRepository],
  exports: [RateLimits],
})
export class RateLimitsModule {}
