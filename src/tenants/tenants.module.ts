import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApplicationsModule } from '../applications/applications.module';
import { TenantMember } from './tenant-member.entity';
import { Tenant } from './tenant.entity';
import { TenantsService } from './tenants.service';
import { User } from './user.entity';

@Module({
  imports: [TypeOrmModule.forFeature([Tenant, User, TenantMember]), ApplicationsModule],
  providers: [TenantsService],
  exports: [TenantsService],
})
export class TenantsModule {}
