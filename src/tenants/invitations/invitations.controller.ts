import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../../access/decorators';
import { Principal } from '../../access/principal';
import { Page } from '../../common/pagination';
import { UuidParam } from '../../common/uuid-param';
import {
  CreateInvitationDto,
  InvitationDto,
  InvitationPageDto,
  ListInvitationsQueryDto,
} from './dto/invitation.dto';
import { InvitationsService } from './invitations.service';
import { IdempotentWrites } from '../../idempotency/idempotent-writes';

@ApiTags('Members and invitations')
@IdempotentWrites()
@Controller('tenants/self/invitations')
export class InvitationsController {
  constructor(private readonly invitations: InvitationsService) {}

  @Post()
  @RequirePermission('tenant:invitation:create')
  @ApiOperation({
    summary: 'Invite someone by e-mail',
    description:
      'PENDING for 72 hours; an e-mail with the acceptance link is sent to the canonical address. `delivery` ' +
      'says whether it was sent; while the mail server is unreachable it stays `pending` and is retried. 409 ' +
      'for a member or a pending invitation; 429 (Retry-After) past the hourly e-mail limits per address and tenant.',
  })
  @ApiCreatedResponse({ type: InvitationDto })
  create(@CurrentPrincipal() p: Principal, @Body() dto: CreateInvitationDto): Promise<InvitationDto> {
    return this.invitations.create(p, dto.email);
  }

  @Get()
  @RequirePermission('tenant:invitation:read')
  @ApiOperation({ summary: 'List invitations', description: 'Filter by `status` (PENDING or EXPIRED).' })
  @ApiOkResponse({ type: InvitationPageDto })
  list(
    @CurrentPrincipal() p: Principal,
    @Query() query: ListInvitationsQueryDto,
  ): Promise<Page<InvitationDto>> {
    return this.invitations.list(p, query);
  }

  @Get(':id')
  @RequirePermission('tenant:invitation:read')
  @ApiOperation({ summary: 'Get an invitation' })
  @ApiOkResponse({ type: InvitationDto })
  get(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<InvitationDto> {
    return this.invitations.get(p, id);
  }

  @Post(':id/resend')
  @HttpCode(200)
  @RequirePermission('tenant:invitation:create', 'tenant:invitation:update')
  @ApiOperation({
    summary: 'Resend an invitation',
    description:
      'Back to PENDING for 72 hours with a new link, e-mailed as on create (see `delivery`); earlier links stop ' +
      'working. 429 (Retry-After) past the hourly e-mail limits, and then nothing changes.',
  })
  @ApiOkResponse({ type: InvitationDto })
  resend(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<InvitationDto> {
    return this.invitations.resend(p, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('tenant:invitation:delete')
  @ApiOperation({ summary: 'Delete an invitation', description: 'Its links stop working at once.' })
  @ApiNoContentResponse()
  delete(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<void> {
    return this.invitations.delete(p, id);
  }
}
