import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApplicationsModule } from '../applications/applications.module';
import { MembersController } from './members.controller';
import { MembersService } from './members.service';
import { TenantMember } from './tenant-member.entity';
import { Tenant } from './tenant.entity';
import { TenantsService } from './tenants.service';
import { TenantSelfController } from './tenant-self.controller';
import { TenantSelfService } from './tenant-self.service';
import { User } from './user.entity';

@Module({
  imports: [TypeOrmModule.forFeature([Tenant, User, TenantMember]), ApplicationsModule],
  controllers: [TenantSelfController, MembersController],
  providers: [TenantsService, MembersService, TenantSelfService],
  exports: [TenantsService, MembersService, TenantSelfService],
})
export class TenantsModule {}
