import { Module } from '@nestjs/common';
import { ApplicationsModule } from '../applications/applications.module';
import { SessionPrincipals } from './session-principals.service';
import { SessionsController } from './sessions.controller';
import { SessionsRepository } from './sessions.repository';
import { SessionsService } from './sessions.service';

/** /sessions, and session keys as principals for the authenticator. */
@Module({
  imports: [ApplicationsModule],
  controllers: [SessionsController],
  providers: [SessionsService, SessionsRepository, SessionPrincipals],
  exports: [SessionsService, SessionPrincipals],
})
export class SessionsModule {}
