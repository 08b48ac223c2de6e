import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApplicationsModule } from '../applications/applications.module';
import { ApiKeyGuard } from './api-key.guard';

@Module({
  imports: [ApplicationsModule],
  providers: [{ provide: APP_GUARD, useClass: ApiKeyGuard }],
})
export class AuthModule {}
