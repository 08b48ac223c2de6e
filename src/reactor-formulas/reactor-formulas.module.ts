import { Module } from '@nestjs/common';
import { ApplicationsModule } from '../applications/applications.module';
import { ReactorFormulasController } from './reactor-formulas.controller';
import { ReactorFormulasRepository } from './reactor-formulas.repository';
import { ReactorFormulasService } from './reactor-formulas.service';

@Module({
  imports: [ApplicationsModule],
  controllers: [ReactorFormulasController],
  providers: [ReactorFormulasService, ReactorFormulasRepository],
  exports: [ReactorFormulasService],
})
export class ReactorFormulasModule {}
