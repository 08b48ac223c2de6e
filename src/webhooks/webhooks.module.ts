import { Module } from '@nestjs/common';
import { MailModule } from '../mail/mail.module';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookSender } from './webhook-sender';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/** /webhooks and the delivery of the webhook outbox (events are published through the global Events). */
@Module({
  imports: [MailModule],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhooksRepository, WebhookDeliveriesRepository, WebhookSender],
  exports: [WebhooksService, WebhookSender],
})
export class WebhooksModule {}
