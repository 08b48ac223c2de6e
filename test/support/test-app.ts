import { Writable } from 'node:stream';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp, VaultApp } from '../../src/app';
import { ApplicationsService } from '../../src/applications/applications.service';
import { ApplicationType } from '../../src/applications/application.entity';
import { AccessRule } from '../../src/auth/access-rules';
import { Permission } from '../../src/auth/permissions';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { DatabaseRuntime } from '../../src/database/database';
import { TenantsService } from '../../src/tenants/tenants.service';
import { openTestDatabase } from './databases';

/** A fixed test master key (never used outside tests). */
export const TEST_MASTER_KEYS = 'test-1:' + Buffer.alloc(32, 7).toString('base64');

export interface TestTenant {
  tenantId: string;
  /** The tenant's management key. */
  key: string;
}

/** The real application on a fresh database, with factories for tenants and applications. */
export class TestContext {
  private constructor(
    public vault: VaultApp,
    public config: AppConfig,
    readonly database: DatabaseRuntime,
    /** The app's JSON log lines, captured for leak checks. */
    readonly logs: string[],
  ) {}

  static async create(env: Record<string, string> = {}): Promise<TestContext> {
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
      ...env,
    });
    const database = await openTestDatabase();
    const logs: string[] = [];
    const logStream = new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    const vault = await createApp(config, { database, logStream });
    return new TestContext(vault, config, database, logs);
  }

  get http(): ReturnType<typeof request> {
    return request(this.vault.app.getHttpServer());
  }

  get dataSource(): DataSource {
    return this.vault.app.get(DataSource);
  }

  async newTenant(name = 'Acme'): Promise<TestTenant> {
    const created = await this.vault.app
      .get(TenantsService)
      .createTenant(name, `owner+${name.toLowerCase()}@example.com`);
    return { tenantId: created.tenant.id, key: created.key };
  }

  /** A key for a new application of the tenant, inserted directly (the API is tested on its own). */
  async newApplication(
    tenant: TestTenant,
    type: ApplicationType,
    permissions: Permission[],
    rules: AccessRule[] = [],
  ): Promise<{ id: string; key: string }> {
    const { application, key } = await this.vault.app
      .get(ApplicationsService)
      .insert(
        this.dataSource.manager,
        tenant.tenantId,
        { name: `${type} app`, type, permissions, rules },
        null,
      );
    return { id: application.id, key };
  }

  /** Stops the app and starts it again on the same database, with extra environment (a server restart). */
  async restart(env: Record<string, string> = {}): Promise<void> {
    await this.vault.close();
    this.config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
      ...env,
    });
    this.vault = await createApp(this.config, { database: this.database, logStream: this.logStream() });
  }

  private logStream(): Writable {
    const logs = this.logs;
    return new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    });
  }

  async close(): Promise<void> {
    await this.vault.close();
    await this.database.close();
  }
}
