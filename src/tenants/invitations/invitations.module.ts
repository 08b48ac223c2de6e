import { TenantsModule } from '../tenants.module';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApplicationsModule } from '../../applications/applications.module';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { AcceptController } from './accept.controller';
import { AcceptRateLimit } from './accept-rate-limit';
import { Invitation } from './invitation.entity';
import { InvitationMailSender } from './invitation-mail-sender';
import { InvitationMailThrottle } from './invitation-mail-throttle';
import { InvitationOutbox } from './invitation-outbox';
import { InvitationsController } from './invitations.controller';
import { InvitationsService } from './invitations.service';
import { Mailer, mailerFor } from './mailer';

@Module({
  imports: [TypeOrmModule.forFeature([Invitation]), ApplicationsModule, TenantsModule],
  controllers: [InvitationsController, AcceptController],
  providers: [
    InvitationsService,
    AcceptRateLimit,
    InvitationMailThrottle,
    InvitationOutbox,
    InvitationMailSender,
    { provide: Mailer, useFactory: (config: AppConfig) => mailerFor(config), inject: [APP_CONFIG] },
  ],
  exports: [InvitationsService, InvitationMailSender],
})
export class InvitationsModule {}
