import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApplicationCache } from './application-cache';
import { Application } from './application.entity';
import { ApplicationsController, PermissionsController } from './applications.controller';
import { ApplicationsService } from './applications.service';

@Module({
  imports: [TypeOrmModule.forFeature([Application])],
  controllers: [ApplicationsController, PermissionsController],
  providers: [ApplicationsService, ApplicationCache],
  exports: [ApplicationsService],
})
export class ApplicationsModule {}
