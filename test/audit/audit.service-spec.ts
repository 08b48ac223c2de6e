import { Registry } from 'prom-client';
import type { Request, Response } from 'express';
import { AuditRecordsRepository } from '../../src/audit/audit-records.repository';
import type { AuditEvent } from '../../src/audit/audit-event';
import { AuditService } from '../../src/audit/audit.service';
import { Clock } from '../../src/common/clock';
import type { MetricsService } from '../../src/metrics/metrics.service';
import { testConfig } from '../support/test-app';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';

const ORIGIN = { requestId: 'req-1', remoteAddress: '127.0.0.1', userAgent: 'jest' };

/** Where AuditService writes: with the change in the open transaction, alone (batched) outside one. */
describe('AuditService', () => {
  let db: TestDataSource;
  let audit: AuditService;
  let tenantId: string;

  beforeAll(async () => {
    db = await openTestDataSource();
    const config = testConfig();
    const metrics = { registry: new Registry() } as MetricsService;
    audit = new AuditService(
      config,
      db.dataLayer,
      new AuditRecordsRepository(db.dataLayer),
      new Clock(),
      metrics,
    );
    tenantId = await db.insertTenant();
  });
  afterAll(() => db.close());

  const event = (operation: string, tokenIds?: string[]): AuditEvent => ({
    tenantId,
    actor: null,
    entityType: 'token',
    entityId: null,
    operation,
    message: `Tokens ${operation}`,
    tokenIds,
  });

  async function recorded(operation: string): Promise<{ operation: string; token_ids: string[] | null }[]> {
    return db.dataSource.query(
      'SELECT operation, token_ids FROM audit_records WHERE tenant_id = $1 AND operation = $2',
      [tenantId, operation],
    );
  }

  it('writes a record outside a transaction, and several of one request together', async () => {
    await audit.record(event('read-alone', ['a', 'b']), ORIGIN);
    expect(await recorded('read-alone')).toEqual([{ operation: 'read-alone', token_ids: ['a', 'b'] }]);
    await audit.recordAll([event('read-many'), event('read-many'), event('read-many')], ORIGIN);
    expect(await recorded('read-many')).toHaveLength(3);
  });

  it('writes in the open transaction: a rolled-back change leaves no record', async () => {
    await db.dataLayer.transaction(() => audit.recordAll([event('kept'), event('kept')], ORIGIN));
    await expect(
      db.dataLayer.transaction(async () => {
        await audit.record(event('undone'), ORIGIN);
        throw new Error('the change fails');
      }),
    ).rejects.toThrow('the change fails');
    expect(await recorded('kept')).toHaveLength(2);
    expect(await recorded('undone')).toEqual([]);
  });

  it('records an operator action for every tenant', async () => {
    const other = await db.insertTenant('Other');
    await audit.recordOperatorAction('all', 'operator-rotate', 'Master key rotated');
    const rows: { tenant_id: string; actor_type: string }[] = await db.dataSource.query(
      "SELECT tenant_id, actor_type FROM audit_records WHERE operation = 'operator-rotate' ORDER BY tenant_id",
    );
    expect(rows.map((r) => r.tenant_id).sort()).toEqual([tenantId, other].sort());
    expect(rows.every((r) => r.actor_type === 'system')).toBe(true);
  });

  it('counts failed authentications per key prefix and hour', async () => {
    const refused = (key: string): Promise<void> =>
      audit.recordRefusal(
        { headers: { 'bt-api-key': key } } as unknown as Request,
        { statusCode: 401, locals: {} } as unknown as Response,
        ORIGIN,
      );
    await refused('key_AbCdEfGh');
    await refused('key_AbCdXyZ1');
    await refused('not-a-key');
    const counts: { key_prefix: string; attempts: number }[] = await db.dataSource.query(
      'SELECT key_prefix, attempts FROM audit_auth_failures ORDER BY key_prefix',
    );
    expect(counts).toEqual([
      { key_prefix: '(malformed)', attempts: 1 },
      { key_prefix: 'key_AbCd', attempts: 2 },
    ]);
  });
});
