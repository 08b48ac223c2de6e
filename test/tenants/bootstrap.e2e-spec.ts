import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp, VaultApp } from '../../src/app';
import { permissionsFor } from '../../src/access/permissions';
import { loadConfig } from '../../src/config/app-config';
import { generateApiKey } from '../../src/crypto';
import { TenantsService } from '../../src/tenants/tenants.service';
import { TEST_MASTER_KEYS, TestContext } from '../support/test-app';

/** With PostgreSQL, persistence across restarts is the database's own business. */
const embeddedOnly = process.env.DATABASE_URL ? it.skip : it;

/** The default tenant and tenant creation with the real modules they write through (keys, applications). */
describe('bootstrap with the application', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  const count = async (table: string): Promise<number> => {
    const [{ n }]: { n: number }[] = await ctx.dataSource.query(`SELECT count(*)::int AS n FROM ${table}`);
    return n;
  };

  it('gives the default tenant a management key (the operator-chosen one) that does management work', async () => {
    const key = generateApiKey();
    const created = await ctx.get(TenantsService).bootstrap(key);
    expect(created?.key).toBe(key);
    const self = await ctx.http.get('/applications/key').set('BT-API-KEY', key).expect(200);
    expect(self.body).toMatchObject({ tenant_id: created!.tenant.id, type: 'management', created_by: null });
    expect([...self.body.permissions].sort()).toEqual([...permissionsFor('management')].sort());
    await ctx.http
      .post('/applications')
      .set('BT-API-KEY', key)
      .send({ name: 'First', type: 'private' })
      .expect(201);
    for (const table of ['applications', 'application_keys']) {
      const rows = await ctx.dataSource.query(`SELECT * FROM ${table}`);
      expect(JSON.stringify(rows)).not.toContain(key.slice(4));
    }
  });

  it('creates a tenant all or nothing across modules: a key already in use leaves nothing behind', async () => {
    const taken = generateApiKey();
    await ctx.get(TenantsService).createTenant('First', 'first@example.com', taken);
    const before = await Promise.all(
      ['tenants', 'users', 'tenant_members', 'tenant_keys', 'applications'].map(count),
    );
    await expect(
      ctx.get(TenantsService).createTenant('Second', 'second@example.com', taken),
    ).rejects.toThrow();
    expect(
      await Promise.all(['tenants', 'users', 'tenant_members', 'tenant_keys', 'applications'].map(count)),
    ).toEqual(before);
  });
});

describe('embedded database across restarts', () => {
  let dataDir: string;
  let vault: VaultApp | undefined;
  const config = () =>
    loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
    });
  const http = (app: VaultApp) => request(app.app.getHttpServer());

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'tv-restart-'));
  });
  afterAll(async () => {
    await vault?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  embeddedOnly(
    'keeps tenants, applications and keys, and does not bootstrap again',
    async () => {
      vault = await createApp(config());
      const created = await vault.app.get(TenantsService).bootstrap();
      expect(created).not.toBeNull();
      const app = await http(vault)
        .post('/applications')
        .set('BT-API-KEY', created!.key)
        .send({ name: 'Survivor', type: 'private' })
        .expect(201);
      await vault.close();
      vault = undefined;

      vault = await createApp(config());
      const self = await http(vault).get('/applications/key').set('BT-API-KEY', created!.key).expect(200);
      expect(self.body).toMatchObject({
        id: created!.application.id,
        tenant_id: created!.tenant.id,
        type: 'management',
      });
      const survivor = await http(vault).get('/applications/key').set('BT-API-KEY', app.body.key).expect(200);
      expect(survivor.body).toMatchObject({ id: app.body.id, name: 'Survivor' });
      expect(await vault.app.get(TenantsService).bootstrap()).toBeNull();
      await vault.close();
      vault = undefined;
      // Two boots of an embedded database migrated from scratch, on a machine that may be busy.
    },
    180_000,
  );
});
