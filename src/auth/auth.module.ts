import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApplicationsModule } from '../applications/applications.module';
import { SessionsModule } from '../sessions/sessions.module';
import { ApiKeyGuard } from './api-key.guard';
import { Authenticator } from './authenticator.service';

@Module({
  imports: [ApplicationsModule, SessionsModule],
  providers: [Authenticator, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [Authenticator],
})
export class AuthModule {}
