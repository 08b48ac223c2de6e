import { AuditChain } from '../../src/audit/audit-chain.service';
import { AuditCheckpoints } from '../../src/audit/audit-checkpoints.service';
import { AuditRetention } from '../../src/audit/audit-retention.service';
import { Clock } from '../../src/common/clock';
import { MasterKeyring } from '../../src/crypto/master-keyring.service';
import { TenantKeysService } from '../../src/crypto/tenant-keys.service';
import { TenantKeysRepository } from '../../src/crypto/tenant-keys.repository';
import { Database } from '../../src/database/database.service';
import { Transactions } from '../../src/database/transactions';
import { AuditJobsService } from '../../src/jobs/audit-jobs.service';
import { JobRunner } from '../../src/jobs/job-runner';
import { testConfig } from '../support/test-app';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';

describe('the audit retention job and failed-authentication counts', () => {
  let db: TestDataSource;
  let master: MasterKeyring;
  let job: AuditJobsService;
  beforeAll(async () => {
    db = await openTestDataSource();
    const config = testConfig({ AUDIT_RETENTION_DAYS: '30' });
    const { dataSource } = db;
    const transactions = new Transactions(dataSource);
    const clock = new Clock();
    const tenantKeys = new TenantKeysRepository(new Database(dataSource, transactions, config));
    master = new MasterKeyring(config, tenantKeys);
    await master.onModuleInit();
    const keys = new TenantKeysService(master, tenantKeys);
    const chain = new AuditChain(dataSource, transactions, keys, clock);
    job = new AuditJobsService(
      chain,
      new AuditRetention(config, dataSource, transactions, chain),
      clock,
      new JobRunner(dataSource, db.database),
      new AuditCheckpoints(dataSource, chain),
    );
  });
  afterAll(async () => {
    master.onModuleDestroy();
    await db.close();
  });

  it('deletes the hourly counts older than AUDIT_RETENTION_DAYS and keeps the newer ones', async () => {
    const hour = (daysAgo: number): Date => {
      const at = new Date(Date.now() - daysAgo * 86_400_000);
      at.setUTCMinutes(0, 0, 0);
      return at;
    };
    for (const [prefix, daysAgo] of [
      ['old_key', 31],
      ['older_key', 400],
      ['new_key', 29],
      ['now_key', 0],
    ] as const) {
      await db.dataSource.query(
        'INSERT INTO audit_auth_failures (key_prefix, hour, attempts, last_at) VALUES ($1, $2, 3, $2)',
        [prefix, hour(daysAgo)],
      );
    }
    await job.deleteExpired();
    const left: { key_prefix: string }[] = await db.dataSource.query(
      'SELECT key_prefix FROM audit_auth_failures ORDER BY key_prefix',
    );
    expect(left.map((r) => r.key_prefix)).toEqual(['new_key', 'now_key']);
  });
});
