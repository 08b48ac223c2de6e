import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApplicationsModule } from '../applications/applications.module';
import { ReactorFormulasModule } from '../reactor-formulas/reactor-formulas.module';
import { SandboxBridgesModule } from '../sandbox-bridges/sandbox-bridges.module';
import { TokensModule } from '../tokens/tokens.module';
import { ReactService } from './react.service';
import { ReactorCache } from './reactor-cache';
import { Reactor } from './reactor.entity';
import { ReactorRun } from './reactor-run.entity';
import { ReactorRunsService } from './reactor-runs.service';
import { ReactorsController } from './reactors.controller';
import { ReactorsService } from './reactors.service';

@Module({
  imports: [
    TypeOrmModule.forFeature([Reactor, ReactorRun]),
    ReactorFormulasModule,
    ApplicationsModule,
    TokensModule,
    SandboxBridgesModule,
  ],
  controllers: [ReactorsController],
  providers: [ReactorsService, ReactService, ReactorRunsService, ReactorCache],
  exports: [ReactorsService, ReactorRunsService],
})
export class ReactorsModule {}
