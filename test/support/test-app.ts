import type { Abstract, Type } from '@nestjs/common';
import { Writable } from 'node:stream';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp, NestAppFactory, VaultApp } from '../../src/app';
import { ApplicationPrincipals } from '../../src/applications/application-principals.service';
import { ApplicationsService } from '../../src/applications/applications.service';
import { ApplicationType } from '../../src/access/application-type';
import { AccessRule } from '../../src/access/access-rules';
import { Permission } from '../../src/access/permissions';
import { Principal } from '../../src/access/principal';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { DatabaseRuntime, openDatabase } from '../../src/database/database';
import { TenantsService } from '../../src/tenants/tenants.service';
import { openTestDatabase } from './databases';
import { overridingFactory, ProviderOverride } from './overrides';

/** A fixed test master key (never used outside tests). */
export const TEST_MASTER_KEYS = 'test-1:' + Buffer.alloc(32, 7).toString('base64');

export interface TestTenant {
  tenantId: string;
  /** The tenant's management key. */
  key: string;
}

/** An application made by `newApplication`. */
export interface TestApplication {
  tenantId: string;
  id: string;
  key: string;
}

export interface TestContextOptions {
  /** Environment on top of the test defaults (NODE_ENV=test, the test master key). */
  env?: Record<string, string>;
  /** Providers replaced by test doubles (the clock, the sandbox, the mailer, the outbound connector). */
  overrides?: ProviderOverride[];
  /**
   * A database opened by the test itself (a fault test's own PostgreSQL, see DisposablePostgres); closed
   * with the context. Default: a fresh test database.
   */
  database?: DatabaseRuntime;
}

/**
 * The real application on a fresh database, with factories for tenants and applications. Two tiers use it:
 * e2e tests through HTTP (`http`), service tests through the services themselves (`get`, `principalOf`).
 */
export class TestContext {
  private constructor(
    public vault: VaultApp,
    public config: AppConfig,
    readonly database: DatabaseRuntime,
    /** The app's JSON log lines, captured for leak checks. */
    readonly logs: string[],
    private readonly nestFactory: NestAppFactory | undefined,
  ) {}

  private readonly instances: VaultApp[] = [];

  static async create(options: TestContextOptions = {}): Promise<TestContext> {
    const config = testConfig(options.env);
    const database = options.database ?? (await openTestDatabase());
    const logs: string[] = [];
    const overrides = options.overrides ?? [];
    // Without overrides, exactly the production path (NestFactory.create).
    const nestFactory = overrides.length > 0 ? overridingFactory(overrides) : undefined;
    try {
      const vault = await createApp(config, { database, logStream: logSink(logs), nestFactory });
      return new TestContext(vault, config, database, logs, nestFactory);
    } catch (err) {
      await database.close();
      throw err;
    }
  }

  /**
   * The application on a PostgreSQL server the test runs itself (DATABASE_URL in `env`: a DisposablePostgres,
   * a relay or a pooler in front of one), as a replica would start on it.
   */
  static async onOwnServer(env: Record<string, string>): Promise<TestContext> {
    const database = await openDatabase(loadConfig({ ...env, LOG_LEVEL: 'silent' }));
    return TestContext.create({ env, database });
  }

  get http(): ReturnType<typeof request> {
    return request(this.vault.app.getHttpServer());
  }

  get dataSource(): DataSource {
    return this.vault.app.get(DataSource);
  }

  /** A provider of the running app (a service, a repository, an overridden double), as services get it. */
  get<T>(token: Type<T> | Abstract<T> | string | symbol): T {
    return this.vault.app.get<T>(token);
  }

  /**
   * The principal of a test application as the API-key guard builds it for a request, for service tests
   * that call a service the way its controller does.
   */
  async principalOf(app: TestApplication): Promise<Principal> {
    const principal = await this.get(ApplicationPrincipals).principalFor(app.tenantId, app.id);
    if (principal === null) {
      throw new Error(`Application ${app.id} does not exist (deleted?)`);
    }
    return principal;
  }

  async newTenant(name = 'Acme'): Promise<TestTenant> {
    const created = await this.get(TenantsService).createTenant(
      name,
      `owner+${name.toLowerCase()}@example.com`,
    );
    return { tenantId: created.tenant.id, key: created.key };
  }

  /** A key for a new application of the tenant, inserted directly (the API is tested on its own). */
  async newApplication(
    tenant: TestTenant,
    type: ApplicationType,
    permissions: Permission[],
    rules: AccessRule[] = [],
  ): Promise<TestApplication> {
    const { application, key } = await this.get(ApplicationsService).insert(
      tenant.tenantId,
      { name: `${type} app`, type, permissions, rules },
      null,
    );
    if (key === undefined) {
      throw new Error('the application was created without a key');
    }
    return { tenantId: tenant.tenantId, id: application.id, key };
  }

  /**
   * Stops the app and starts it again on the same database, with extra environment (a server restart). The
   * overrides stay: a restart replaces the process, not the world the tests set up around it.
   */
  async restart(env: Record<string, string> = {}): Promise<void> {
    await this.vault.close();
    this.config = testConfig(env);
    this.vault = await createApp(this.config, {
      database: this.database,
      logStream: logSink(this.logs),
      nestFactory: this.nestFactory,
    });
  }

  /**
   * Another instance of the application on this context's database, as a second replica would run
   * (meaningful on PostgreSQL: the embedded database belongs to one process). Closed by `close`.
   */
  async secondInstance(): Promise<VaultApp> {
    const instance = await createApp(this.config, { database: this.database, docs: false });
    this.instances.push(instance);
    return instance;
  }

  async close(): Promise<void> {
    for (const instance of this.instances.splice(0)) {
      await instance.close();
    }
    await this.vault.close();
    await this.database.close();
  }
}

/** The configuration a test app boots with: the test defaults with `env` on top. */
export function testConfig(env: Record<string, string> = {}): AppConfig {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
    JOBS_ENABLED: 'false',
    ...env,
  });
}

/** A stream that appends each log line to `logs`. */
function logSink(logs: string[]): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
}
