import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { Page } from '../common/pagination';
import { UuidParam } from '../common/uuid-param';
import { EVENT_TYPES, EventType } from '../events/event-types';
import {
  CreatedWebhookDto,
  ListWebhooksQueryDto,
  WebhookBodyDto,
  WebhookDto,
  WebhookPageDto,
} from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

@ApiTags('Webhooks')
@IdempotentWrites()
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  // Before ':id', so the path is not read as an id.
  @Get('event-types')
  @RequirePermission('webhook:read')
  @ApiOperation({ summary: 'List the event types a webhook can subscribe to' })
  @ApiOkResponse({ schema: { type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] } } })
  eventTypes(): readonly EventType[] {
    return EVENT_TYPES;
  }

  @Post()
  @RequirePermission('webhook:create')
  @ApiOperation({
    summary: 'Create a webhook',
    description:
      'Events are POSTed to `url` as JSON (ids, types and timestamps, never token data), signed with ' +
      'HMAC-SHA256 in `X-Webhook-Signature`. The answer carries the signing `secret`, shown only once.',
  })
  @ApiCreatedResponse({ type: CreatedWebhookDto })
  create(@CurrentPrincipal() p: Principal, @Body() dto: WebhookBodyDto): Promise<CreatedWebhookDto> {
    return this.webhooks.create(p, dto);
  }

  @Get()
  @RequirePermission('webhook:read')
  @ApiOperation({ summary: 'List webhooks' })
  @ApiOkResponse({ type: WebhookPageDto })
  list(@CurrentPrincipal() p: Principal, @Query() query: ListWebhooksQueryDto): Promise<Page<WebhookDto>> {
    return this.webhooks.list(p, query);
  }

  @Get(':id')
  @RequirePermission('webhook:read')
  @ApiOperation({ summary: 'Get a webhook' })
  @ApiOkResponse({ type: WebhookDto })
  get(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<WebhookDto> {
    return this.webhooks.get(p, id);
  }

  @Put(':id')
  @RequirePermission('webhook:update')
  @ApiOperation({
    summary: 'Replace a webhook',
    description: 'Same fields as create; the secret stays. A disabled webhook is enabled again.',
  })
  @ApiOkResponse({ type: WebhookDto })
  update(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @Body() dto: WebhookBodyDto,
  ): Promise<WebhookDto> {
    return this.webhooks.update(p, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('webhook:delete')
  @ApiOperation({ summary: 'Delete a webhook', description: 'Its undelivered events are dropped.' })
  @ApiNoContentResponse()
  delete(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<void> {
    return this.webhooks.delete(p, id);
  }
}
