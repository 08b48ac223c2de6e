import { Module } from '@nestjs/common';
import { ApplicationCache } from './application-cache';
import { ApplicationKeysRepository } from './application-keys.repository';
import { ApplicationKeysController } from './application-keys.controller';
import { ApplicationKeysService } from './application-keys.service';
import { ApplicationLookups } from './application-lookups.service';
import { ApplicationPrincipals } from './application-principals.service';
import { ApplicationsController, PermissionsController } from './applications.controller';
import { ApplicationsRepository } from './applications.repository';
import { ApplicationsService } from './applications.service';

@Module({
  controllers: [ApplicationsController, ApplicationKeysController, PermissionsController],
  providers: [
    ApplicationsService,
    ApplicationPrincipals,
    ApplicationLookups,
    ApplicationCache,
    ApplicationKeysService,
    ApplicationsRepository,
    ApplicationKeysRepository,
  ],
  exports: [ApplicationsService, ApplicationPrincipals, ApplicationLookups],
})
export class ApplicationsModule {}
