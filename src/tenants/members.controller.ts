import { Body, Controller, Delete, Get, HttpCode, Put, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { Page } from '../common/pagination';
import { UuidParam } from '../common/uuid-param';
import { ListMembersQueryDto, MemberDto, MemberPageDto, UpdateMemberDto } from './dto/member.dto';
import { MembersService } from './members.service';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

@ApiTags('Members and invitations')
@IdempotentWrites()
@Controller('tenants/self/members')
export class MembersController {
  constructor(private readonly members: MembersService) {}

  @Get()
  @RequirePermission('tenant:member:read')
  @ApiOperation({
    summary: 'List members',
    description: 'Filter by `user_id` (repeatable); at most 50 per page.',
  })
  @ApiOkResponse({ type: MemberPageDto })
  list(@CurrentPrincipal() p: Principal, @Query() query: ListMembersQueryDto): Promise<Page<MemberDto>> {
    return this.members.list(p, query);
  }

  @Put(':id')
  @RequirePermission('tenant:member:update')
  @ApiOperation({
    summary: "Change a member's role",
    description: 'ADMIN or READ_ONLY; the OWNER answers 422.',
  })
  @ApiOkResponse({ type: MemberDto })
  update(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @Body() dto: UpdateMemberDto,
  ): Promise<MemberDto> {
    return this.members.update(p, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('tenant:member:delete')
  @ApiOperation({
    summary: 'Remove a member',
    description: 'Ends their membership at once; the OWNER answers 422.',
  })
  @ApiNoContentResponse()
  delete(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<void> {
    return this.members.delete(p, id);
  }
}
