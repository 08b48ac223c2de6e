import { Global, Module } from '@nestjs/common';
import { AuditChain } from './audit-chain.service';
import { AuditChainsRepository } from './audit-chains.repository';
import { AuditCheckpoints } from './audit-checkpoints.service';
import { AuditRecordsRepository } from './audit-records.repository';
import { AuditRetention } from './audit-retention.service';
import { AuditService } from './audit.service';
import { LogsController } from './logs.controller';
import { LogsService } from './logs.service';

/** The audit trail: every module records through AuditService (global, so no module has to import this one). */
@Global()
@Module({
  controllers: [LogsController],
  providers: [
    AuditRecordsRepository,
    AuditChainsRepository,
    AuditService,
    AuditChain,
    AuditCheckpoints,
    AuditRetention,
    LogsService,
  ],
  exports: [AuditService, AuditChain, AuditCheckpoints, AuditRetention],
})
export class AuditModule {}
