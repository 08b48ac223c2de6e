import { AuditJobsService } from '../../src/jobs/audit-jobs.service';
import { testConfig } from '../support/test-app';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';
import { auditServices, AuditServices } from './audit-services';

describe('the audit retention job and failed-authentication counts', () => {
  let db: TestDataSource;
  let audit: AuditServices;
  let job: AuditJobsService;
  beforeAll(async () => {
    db = await openTestDataSource();
    audit = await auditServices(db, testConfig({ AUDIT_RETENTION_DAYS: '30' }));
    job = audit.jobs;
  });
  afterAll(async () => {
    audit.close();
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
