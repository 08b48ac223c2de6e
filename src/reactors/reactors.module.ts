import { Module } from '@nestjs/common';
import { ApplicationsModule } from '../applications/applications.module';
import { ReactorFormulasModule } from '../reactor-formulas/reactor-formulas.module';
import { SandboxBridgesModule } from '../sandbox-bridges/sandbox-bridges.module';
import { TokensModule } from '../tokens/tokens.module';
import { ReactService } from './react.service';
import { ReactorCache } from './reactor-cache';
import { ReactorRunsRepository } from './reactor-runs.repository';
import { ReactorRunsService } from './reactor-runs.service';
import { ReactorsController } from './reactors.controller';
import { ReactorsRepository } from './reactors.repository';
import { ReactorsService } from './reactors.service';

@Module({
  imports: [ReactorFormulasModule, ApplicationsModule, TokensModule, SandboxBridgesModule],
  controllers: [ReactorsController],
  providers: [
    ReactorsService,
    ReactorsRepository,
    ReactService,
    ReactorRunsService,
    ReactorRunsRepository,
    ReactorCache,
  ],
  exports: [ReactorsService, ReactorRunsService],
})
export class ReactorsModule {}
