import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ReactorFormula } from './reactor-formula.entity';
import { ReactorFormulasController } from './reactor-formulas.controller';
import { ReactorFormulasService } from './reactor-formulas.service';

@Module({
  imports: [TypeOrmModule.forFeature([ReactorFormula])],
  controllers: [ReactorFormulasController],
  providers: [ReactorFormulasService],
  exports: [ReactorFormulasService],
})
export class ReactorFormulasModule {}
