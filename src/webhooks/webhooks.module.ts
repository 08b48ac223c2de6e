import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MailModule } from '../mail/mail.module';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookSender } from './webhook-sender';
import { Webhook } from './webhook.entity';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** /webhooks and the delivery of the webhook outbox (events are published through the global Events). */
@Module({
  imports: [TypeOrmModule.forFeature([Webhook]), MailModule],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhookDeliveriesRepository, WebhookSender],
  exports: [WebhooksService, WebhookSender],
})
export class WebhooksModule {}
