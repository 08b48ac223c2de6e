import { randomUUID } from 'node:crypto';
import type { AccessRule } from '../../src/access/access-rules';
import type { Permission } from '../../src/access/permissions';
import type { Principal } from '../../src/access/principal';
import { AuditRecordsRepository } from '../../src/audit/audit-records.repository';
import { AuditService } from '../../src/audit/audit.service';
import { ClientKeysRepository } from '../../src/client-keys/client-keys.repository';
import { ClientKeysService } from '../../src/client-keys/client-keys.service';
import { Clock } from '../../src/common/clock';
import type { AppConfig } from '../../src/config/app-config';
import { KeyRotation } from '../../src/crypto/key-rotation.service';
import { MasterKeyring } from '../../src/crypto/master-keyring.service';
import { TenantCipher } from '../../src/crypto/tenant-cipher.service';
import { TenantKeysRepository } from '../../src/crypto/tenant-keys.repository';
import { TenantKeysService } from '../../src/crypto/tenant-keys.service';
import { Database } from '../../src/database/database.service';
import { Events } from '../../src/events/events';
import { EventsRepository } from '../../src/events/events.repository';
import { ExpressionEngine } from '../../src/expressions';
import { MetricsService } from '../../src/metrics/metrics.service';
import { RateLimitCountersRepository } from '../../src/rate-limits/rate-limit-counters.repository';
import { RateLimits } from '../../src/rate-limits/rate-limits.service';
import { DedupRateLimit } from '../../src/tokens/dedup-rate-limit';
import { DetokenizeService } from '../../src/tokens/detokenize.service';
import { TokenBuilder } from '../../src/tokens/token-builder.service';
import { TokenCipher } from '../../src/tokens/token-cipher.service';
import { TokenInserter } from '../../src/tokens/token-inserter.service';
import { TokenPresentation } from '../../src/tokens/token-presentation.service';
import { TokenUpdates } from '../../src/tokens/token-updates.service';
import { TokensRepository } from '../../src/tokens/tokens.repository';
import { TokensService } from '../../src/tokens/tokens.service';
import { WriteCounter } from '../../src/tokens/write-counter';
import { testConfig } from './test-app';
import { openTestDataSource, TestDataSource } from './test-data-source';
import { ALL_TOKEN_PERMISSIONS } from './token-factory';

/**
 * The tokens module's services built by hand on a migrated test database, each with its real repository and
 * dependencies, without booting Nest: for service tests of the tokens module.
 */
export interface TokenServices {
  db: TestDataSource;
  config: AppConfig;
  data: Database;
  repository: TokensRepository;
  tokens: TokensService;
  updates: TokenUpdates;
  detokenize: DetokenizeService;
  presentation: TokenPresentation;
  dedup: DedupRateLimit;
  /** A tenant with its keys, as tenant creation makes it. */
  newTenant(): Promise<string>;
  /** A private application's principal in the tenant (no application row: the services take the principal). */
  principal(tenantId: string, rules?: AccessRule[], permissions?: Permission[]): Principal;
  /** The tenant's audit records of one operation on one entity. */
  records(tenantId: string, operation: string, entityId: string): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export async function openTokenServices(env: Record<string, string> = {}): Promise<TokenServices> {
  const db = await openTestDataSource();
  const { dataSource } = db;
  const config = testConfig(env);
  const data = db.dataLayer;
  const clock = new Clock();
  const metrics = new MetricsService(data, config);
  const tenantKeys = new TenantKeysRepository(data);
  const master = new MasterKeyring(config, tenantKeys);
  await master.onModuleInit();
  const keys = new TenantKeysService(master, tenantKeys);
  const rotation = new KeyRotation(master, tenantKeys, data, keys);
  const limits = new RateLimits(config, db.database, new RateLimitCountersRepository(data), metrics);
  await limits.onModuleInit();
  const cipher = new TokenCipher(keys, new TenantCipher(keys));
  const engine = new ExpressionEngine();
  const audit = new AuditService(config, data, new AuditRecordsRepository(data), clock, metrics);
  const events = new Events(new EventsRepository(data), clock);
  const repository = new TokensRepository(data, new WriteCounter());
  const presentation = new TokenPresentation(cipher, engine);
  const builder = new TokenBuilder(cipher, engine);
  const dedup = new DedupRateLimit(limits, metrics);
  const inserter = new TokenInserter(repository, clock, dedup, events, audit, data);
  const tokens = new TokensService(
    repository,
    cipher,
    builder,
    engine,
    clock,
    dedup,
    inserter,
    audit,
    events,
    presentation,
    data,
    new ClientKeysService(new ClientKeysRepository(data), data, new TenantCipher(keys), clock, audit),
  );
  return {
    db,
    config,
    data,
    repository,
    tokens,
    updates: new TokenUpdates(
      repository,
      tokens,
      builder,
      engine,
      clock,
      dedup,
      audit,
      events,
      presentation,
      data,
    ),
    detokenize: new DetokenizeService(repository, presentation, engine, clock, audit),
    presentation,
    dedup,
    newTenant: async () => {
      const tenantId = await db.insertTenant();
      await rotation.createTenantKeys(tenantId);
      return tenantId;
    },
    principal: (tenantId, rules = [], permissions = ALL_TOKEN_PERMISSIONS) => ({
      tenantId,
      applicationId: randomUUID(),
      applicationType: 'private',
      // As an application's principal: its permissions and those its rules grant.
      permissions: new Set<Permission>([
        ...permissions,
        ...rules.flatMap((r) => r.permissions as Permission[]),
      ]),
      rules,
    }),
    records: (tenantId, operation, entityId) =>
      dataSource.query(
        'SELECT * FROM audit_records WHERE tenant_id = $1 AND operation = $2 AND entity_id = $3',
        [tenantId, operation, entityId],
      ),
    close: async () => {
      await limits.beforeApplicationShutdown();
      await limits.onApplicationShutdown();
      master.onModuleDestroy();
      await db.close();
    },
  };
}
