import { Body, Controller, Delete, Get, HttpCode, Put } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { MemberDto } from './dto/member.dto';
import {
  SecurityContactDto,
  SecurityContactResponseDto,
  TenantDto,
  TenantUsageReportDto,
  UpdateTenantDto,
} from './dto/tenant.dto';
import { TenantSelfService } from './tenant-self.service';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

@ApiTags('Tenants')
@IdempotentWrites()
@Controller('tenants/self')
export class TenantSelfController {
  constructor(private readonly tenants: TenantSelfService) {}

  @Get()
  @RequirePermission('tenant:read')
  @ApiOperation({ summary: 'The tenant of the key', description: 'Name, owner and settings.' })
  @ApiOkResponse({ type: TenantDto })
  get(@CurrentPrincipal() p: Principal): Promise<TenantDto> {
    return this.tenants.get(p);
  }

  @Put()
  @RequirePermission('tenant:update')
  @ApiOperation({ summary: 'Update the tenant', description: 'Its name and settings (string values).' })
  @ApiOkResponse({ type: TenantDto })
  update(@CurrentPrincipal() p: Principal, @Body() dto: UpdateTenantDto): Promise<TenantDto> {
    return this.tenants.update(p, dto);
  }

  @Delete()
  @HttpCode(204)
  @RequirePermission('tenant:update')
  @ApiOperation({
    summary: 'Delete the tenant',
    description:
      "Owner's key only (the management application the tenant was created with). Every key stops at once; " +
      'the data is purged after TENANT_DELETION_GRACE_DAYS (default 30).',
  })
  @ApiNoContentResponse()
  delete(@CurrentPrincipal() p: Principal): Promise<void> {
    return this.tenants.delete(p);
  }

  @Get('reports/usage')
  @RequirePermission('tenant:read')
  @ApiOperation({ summary: 'Usage report', description: 'Live tokens by type and monthly active tokens.' })
  @ApiOkResponse({ type: TenantUsageReportDto })
  usage(@CurrentPrincipal() p: Principal): Promise<TenantUsageReportDto> {
    return this.tenants.usage(p);
  }

  @Get('owner')
  @RequirePermission('tenant:read')
  @ApiOperation({ summary: 'The owner', description: 'The member holding the OWNER role.' })
  @ApiOkResponse({ type: MemberDto })
  owner(@CurrentPrincipal() p: Principal): Promise<MemberDto> {
    return this.tenants.owner(p);
  }

  @Get('security-contact')
  @RequirePermission('tenant:read')
  @ApiOperation({ summary: 'The security contact', description: 'null until one is set.' })
  @ApiOkResponse({ type: SecurityContactResponseDto })
  securityContact(@CurrentPrincipal() p: Principal): Promise<SecurityContactResponseDto> {
    return this.tenants.securityContact(p);
  }

  @Put('security-contact')
  @RequirePermission('tenant:update')
  @ApiOperation({ summary: 'Set the security contact', description: 'The address security notices go to.' })
  @ApiOkResponse({ type: SecurityContactResponseDto })
  updateSecurityContact(
    @CurrentPrincipal() p: Principal,
    @Body() dto: SecurityContactDto,
  ): Promise<SecurityContactResponseDto> {
    return this.tenants.updateSecurityContact(p, dto);
  }
}
