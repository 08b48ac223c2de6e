import { TenantsModule } from '../tenants.module';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApplicationsModule } from '../../applications/applications.module';
import { AcceptController } from './accept.controller';
import { AcceptRateLimit } from './accept-rate-limit';
import { Invitation } from './invitation.entity';
import { InvitationMailSender } from './invitation-mail-sender';
import { InvitationMailThrottle } from './invitation-mail-throttle';
import { InvitationOutbox } from './invitation-outbox';
import { InvitationsController } from './invitations.controller';
import { InvitationsService } from './invitations.service';
import { MailModule } from '../../mail/mail.module';

@Module({
  imports: [TypeOrmModule.forFeature([Invitation]), ApplicationsModule, TenantsModule, MailModule],
  controllers: [InvitationsController, AcceptController],
  providers: [
    InvitationsService,
    AcceptRateLimit,
    InvitationMailThrottle,
    InvitationOutbox,
    InvitationMailSender,
  ],
  exports: [InvitationsService, InvitationMailSender],
})
export class InvitationsModule {}
