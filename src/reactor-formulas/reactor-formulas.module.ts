import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApplicationsModule } from '../applications/applications.module';
import { ReactorFormula } from './reactor-formula.entity';
import { ReactorFormulasController } from './reactor-formulas.controller';
import { ReactorFormulasService } from './reactor-formulas.service';

@Module({
  imports: [TypeOrmModule.forFeature([ReactorFormula]), ApplicationsModule],
  controllers: [ReactorFormulasController],
  providers: [ReactorFormulasService],
  exports: [ReactorFormulasService],
})
export class ReactorFormulasModule {}
