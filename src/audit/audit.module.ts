import { Global, Module } from '@nestjs/common';
import { AuditChain } from './audit-chain.service';
import { AuditCheckpoints } from './audit-checkpoints.service';
import { AuditRetention } from './audit-retention.service';
import { AuditService } from './audit.service';
import { LogsController } from './logs.controller';
import { LogsService } from './logs.service';

/** The audit trail: every module records through AuditService (global, so no module has to import this one). */
@Global()
@Module({
  controllers: [LogsController],
  providers: [AuditService, AuditChain, AuditCheckpoints, AuditRetention, LogsService],
  exports: [AuditService, AuditChain, AuditCheckpoints, AuditRetention],
})
export class AuditModule {}
