import { Module } from '@nestjs/common';
import { ApplicationsModule } from '../applications/applications.module';
import { MembersController } from './members.controller';
import { MembersRepository } from './members.repository';
import { MembersService } from './members.service';
import { TenantsRepository } from './tenants.repository';
import { TenantsService } from './tenants.service';
import { TenantSelfController } from './tenant-self.controller';
import { TenantSelfService } from './tenant-self.service';

@Module({
  imports: [ApplicationsModule],
  controllers: [TenantSelfController, MembersController],
  providers: [TenantsRepository, MembersRepository, TenantsService, MembersService, TenantSelfService],
  exports: [TenantsService, MembersService, TenantSelfService],
})
export class TenantsModule {}
