import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApplicationCache } from './application-cache';
import { ApplicationKey } from './application-key.entity';
import { ApplicationKeyStore } from './application-key.store';
import { ApplicationKeysController } from './application-keys.controller';
import { ApplicationKeysService } from './application-keys.service';
import { ApplicationLookups } from './application-lookups.service';
import { ApplicationPrincipals } from './application-principals.service';
import { Application } from './application.entity';
import { ApplicationsController, PermissionsController } from './applications.controller';
import { ApplicationsService } from './applications.service';

@Module({
  imports: [TypeOrmModule.forFeature([Application, ApplicationKey])],
  controllers: [ApplicationsController, ApplicationKeysController, PermissionsController],
  providers: [
    ApplicationsService,
    ApplicationPrincipals,
    ApplicationLookups,
    ApplicationCache,
    ApplicationKeyStore,
    ApplicationKeysService,
  ],
  exports: [ApplicationsService, ApplicationPrincipals, ApplicationLookups],
})
export class ApplicationsModule {}
