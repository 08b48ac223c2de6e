import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApplicationsModule } from '../applications/applications.module';
import { ReactorFormulasModule } from '../reactor-formulas/reactor-formulas.module';
import { Reactor } from './reactor.entity';
import { ReactorsController } from './reactors.controller';
import { ReactorsService } from './reactors.service';

@Module({
  imports: [TypeOrmModule.forFeature([Reactor]), ReactorFormulasModule, ApplicationsModule],
  controllers: [ReactorsController],
  providers: [ReactorsService],
  exports: [ReactorsService],
})
export class ReactorsModule {}
