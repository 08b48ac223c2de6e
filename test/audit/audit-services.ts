import { AuditChain } from '../../src/audit/audit-chain.service';
import { AuditChainsRepository } from '../../src/audit/audit-chains.repository';
import { AuditCheckpoints } from '../../src/audit/audit-checkpoints.service';
import { AuditRecordsRepository } from '../../src/audit/audit-records.repository';
import { AuditRetention } from '../../src/audit/audit-retention.service';
import { Clock } from '../../src/common/clock';
import type { AppConfig } from '../../src/config/app-config';
import { KeyRotation } from '../../src/crypto/key-rotation.service';
import { MasterKeyring } from '../../src/crypto/master-keyring.service';
import { TenantKeysRepository } from '../../src/crypto/tenant-keys.repository';
import { TenantKeysService } from '../../src/crypto/tenant-keys.service';
import { Database } from '../../src/database/database.service';
import { Transactions } from '../../src/database/transactions';
import { AuditJobsService } from '../../src/jobs/audit-jobs.service';
import { JobRunner } from '../../src/jobs/job-runner';
import { JobsRepository } from '../../src/jobs/jobs.repository';
import type { TestDataSource } from '../support/test-data-source';

/** The audit trail's services on a test database, built as the app builds them (a process's worth of them). */
export interface AuditServices {
  chain: AuditChain;
  retention: AuditRetention;
  checkpoints: AuditCheckpoints;
  jobs: AuditJobsService;
  /** A tenant row with its keys (what the chain key is derived from). */
  newTenant(name: string): Promise<string>;
  /** Drops the master keys from memory. */
  close(): void;
}

export async function auditServices(db: TestDataSource, config: AppConfig): Promise<AuditServices> {
  const { dataSource } = db;
  // One data layer for the audit and the key services, as in the app: a key read inside a seal's
  // transaction joins it (on the embedded database a read beside it would wait for it forever).
  const dataLayer = new Database(dataSource, new Transactions(dataSource), config);
  const clock = new Clock();
  const tenantKeys = new TenantKeysRepository(dataLayer);
  const master = new MasterKeyring(config, tenantKeys);
  await master.onModuleInit();
  const keys = new TenantKeysService(master, tenantKeys);
  const rotation = new KeyRotation(master, tenantKeys, dataLayer, keys);
  const records = new AuditRecordsRepository(dataLayer);
  const chains = new AuditChainsRepository(dataLayer);
  const chain = new AuditChain(dataLayer, records, chains, keys, clock);
  const retention = new AuditRetention(config, dataLayer, records, chains, chain);
  const checkpoints = new AuditCheckpoints(chains, chain);
  return {
    chain,
    retention,
    checkpoints,
    jobs: new AuditJobsService(
      chain,
      retention,
      clock,
      new JobRunner(new JobsRepository(dataLayer), db.database),
      checkpoints,
    ),
    newTenant: async (name) => {
      const tenantId = await db.insertTenant(name);
      await rotation.createTenantKeys(tenantId);
      return tenantId;
    },
    close: () => master.onModuleDestroy(),
  };
}
