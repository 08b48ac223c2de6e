import { Global, Module } from '@nestjs/common';
import { AuditChain } from './audit-chain.service';
import { AuditRetention } from './audit-retention.service';
import { AuditService } from './audit.service';
import { LogsController } from './logs.controller';
import { LogsService } from './logs.service';

/** The audit trail: every module records through AuditService (global, so no module has to import this one). */
@Global()
@Module({
  controllers: [LogsController],
  providers: [AuditService, AuditChain, AuditRetention, LogsService],
  exports: [AuditService, AuditChain, AuditRetention],
})
export class AuditModule {}
