import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApplicationsModule } from '../applications/applications.module';
import { ApiKeyGuard } from './api-key.guard';
import { Authenticator } from './authenticator.service';

@Module({
  imports: [ApplicationsModule],
  providers: [Authenticator, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [Authenticator],
})
export class AuthModule {}
