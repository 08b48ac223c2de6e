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
import { API_KEY_FORMAT } from '../support/application-factory';

/** With PostgreSQL, persistence across restarts is the database's own business. */
const embeddedOnly = process.env.DATABASE_URL ? it.skip : it;

async function countRows(
  ctx: TestContext,
  table: 'tenants' | 'applications' | 'tenant_members',
): Promise<number> {
  const rows: { n: string }[] = await ctx.dataSource.query(`SELECT count(*) AS n FROM ${table}`);
  return Number(rows[0].n);
}

describe('bootstrap on an empty database', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('creates one tenant with an OWNER and a management key, once', async () => {
    expect(await countRows(ctx, 'tenants')).toBe(0);
    const tenants = ctx.get(TenantsService);

    const created = await tenants.bootstrap();
    expect(created).not.toBeNull();
    expect(created!.key).toMatch(API_KEY_FORMAT);
    const self = await ctx.http.get('/applications/key').set('BT-API-KEY', created!.key).expect(200);
    expect(self.body).toMatchObject({ tenant_id: created!.tenant.id, type: 'management', created_by: null });
    expect([...self.body.permissions].sort()).toEqual([...permissionsFor('management')].sort());
    // The key can do the management work it is for
    await ctx.http
      .post('/applications')
      .set('BT-API-KEY', created!.key)
      .send({ name: 'First', type: 'private' })
      .expect(201);

    const members: { role: string }[] = await ctx.dataSource.query(
      'SELECT role FROM tenant_members WHERE tenant_id = $1',
      [created!.tenant.id],
    );
    expect(members).toEqual([{ role: 'OWNER' }]);

    expect(await tenants.bootstrap()).toBeNull();
    expect(await tenants.bootstrap(generateApiKey())).toBeNull();
    expect(await countRows(ctx, 'tenants')).toBe(1);
    expect(await countRows(ctx, 'applications')).toBe(2);
  });

  it('does not bootstrap once any tenant exists', async () => {
    await ctx.newTenant('Later');
    expect(await ctx.get(TenantsService).bootstrap()).toBeNull();
    expect(await countRows(ctx, 'tenants')).toBe(2);
  });
});

describe('bootstrap with an operator-chosen key', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('uses the given key and stores only its hash', async () => {
    const key = generateApiKey();
    const created = await ctx.get(TenantsService).bootstrap(key);
    expect(created?.key).toBe(key);
    await ctx.http.get('/applications/key').set('BT-API-KEY', key).expect(200);
    const rows = await ctx.dataSource.query('SELECT * FROM applications');
    expect(JSON.stringify(rows)).not.toContain(key.slice(4));
  });
});

describe('bootstrap by replicas starting together', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('creates the default tenant exactly once', async () => {
    const tenants = ctx.get(TenantsService);
    const results = await Promise.all([tenants.bootstrap(), tenants.bootstrap(), tenants.bootstrap()]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(await countRows(ctx, 'tenants')).toBe(1);
    expect(await countRows(ctx, 'applications')).toBe(1);
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

  embeddedOnly('keeps tenants, applications and keys, and does not bootstrap again', async () => {
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
  });
});
