import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsEmail,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
} from 'class-validator';
import { DisplayName } from '../../common/display-name';
import { PageQueryDto, PaginationDto } from '../../common/pagination';
import { EVENT_TYPES } from '../../events/event-types';
import { WEBHOOK_STATUSES, WebhookStatus } from '../webhook.entity';

/** Create and replace body (the SDK's CreateWebhookRequest and UpdateWebhookRequest). */
export class WebhookBodyDto {
  @ApiProperty({ maxLength: 200, example: 'Token changes to the SIEM' })
  @DisplayName()
  name: string;

  @ApiProperty({
    example: 'https://hooks.example.com/vault',
    description:
      'HTTPS with a DNS host name (no IP address, no user information), checked like a proxy destination.',
  })
  @IsString()
  @MaxLength(2048)
  url: string;

  @ApiPropertyOptional({
    nullable: true,
    example: 'ops@example.com',
    description:
      'Told by e-mail (SMTP_URL) when the webhook is disabled after a sustained run of failed deliveries.',
  })
  @IsOptional()
  @IsEmail()
  @MaxLength(320)
  notify_email?: string | null;

  @ApiProperty({
    type: [String],
    enum: EVENT_TYPES,
    example: ['token.created', 'token.deleted'],
    description: 'The event types to deliver (GET /webhooks/event-types).',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn(EVENT_TYPES, {
    each: true,
    message: 'each value in events must be an event type of GET /webhooks/event-types',
  })
  events: string[];
}

export class ListWebhooksQueryDto extends PageQueryDto {}

export class WebhookDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty({
    enum: WEBHOOK_STATUSES,
    description: '`disabled` after a sustained run of failed deliveries; an update enables it again.',
  })
  status: WebhookStatus;
  @ApiProperty() name: string;
  @ApiProperty() url: string;
  @ApiPropertyOptional({ nullable: true }) notify_email: string | null;
  @ApiProperty({ type: [String] }) events: string[];
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) created_by: string | null;
  @ApiProperty() created_at: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) modified_by: string | null;
  @ApiPropertyOptional({ nullable: true }) modified_at: string | null;
}

export class CreatedWebhookDto extends WebhookDto {
  @ApiProperty({
    example: 'whsec_4fA9...',
    description: 'The signing secret, shown only in this answer: keep it to verify X-Webhook-Signature.',
  })
  secret: string;
}

export class WebhookPageDto {
  @ApiProperty({ type: PaginationDto }) pagination: PaginationDto;
  @ApiProperty({ type: [WebhookDto] }) data: WebhookDto[];
}
