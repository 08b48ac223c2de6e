import { Module } from '@nestjs/common';
import { ApplicationsModule } from '../../applications/applications.module';
import { MailModule } from '../../mail/mail.module';
import { TenantsModule } from '../tenants.module';
import { AcceptController } from './accept.controller';
import { AcceptRateLimit } from './accept-rate-limit';
import { InvitationMailSender } from './invitation-mail-sender';
import { InvitationMailThrottle } from './invitation-mail-throttle';
import { InvitationMailsRepository } from './invitation-mails.repository';
import { InvitationOutbox } from './invitation-outbox';
import { InvitationsController } from './invitations.controller';
import { InvitationsRepository } from './invitations.repository';
import { InvitationsService } from './invitations.service';

@Module({
  imports: [ApplicationsModule, TenantsModule, MailModule],
  controllers: [InvitationsController, AcceptController],
  providers: [
    InvitationsRepository,
    InvitationMailsRepository,
    InvitationsService,
    AcceptRateLimit,
    InvitationMailThrottle,
    InvitationOutbox,
    InvitationMailSender,
  ],
  exports: [InvitationsService, InvitationMailSender],
})
export class InvitationsModule {}
