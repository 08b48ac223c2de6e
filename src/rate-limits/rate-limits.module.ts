import { Global, Module } from '@nestjs/common';
import { RateLimits } from './rate-limits.service';

/** The shared rate limits; global, like metrics, so the guard, /proxy, invitations and tokens reach them. */
@Global()
@Module({
  providers: [RateLimits],
  exports: [RateLimits],
})
export class RateLimitsModule {}
