import { randomUUID } from 'node:crypto';
import { Application } from '../../src/applications/application.entity';
import { ApplicationsService, NewApplication } from '../../src/applications/applications.service';
import { generateApiKey } from '../../src/crypto';
import { KeyRotation } from '../../src/crypto/key-rotation.service';
import { MasterKeyring } from '../../src/crypto/master-keyring.service';
import { Database } from '../../src/database/database.service';
import { MembersRepository } from '../../src/tenants/members.repository';
import { TenantsRepository } from '../../src/tenants/tenants.repository';
import { TenantsService } from '../../src/tenants/tenants.service';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';

/**
 * The other modules tenant creation writes through, as stand-ins that send their rows through the data
 * layer like their repositories do (so they join the ambient transaction, or not): the subject here is the
 * tenant's own part. The real modules are exercised by test/tenants/bootstrap.e2e-spec.ts.
 */
class Collaborators {
  sealed = false;
  failApplications = false;
  readonly keys: string[] = [];

  constructor(private readonly data: Database) {}

  readonly master = this as unknown as MasterKeyring;

  readonly rotation = {
    createTenantKeys: async (tenantId: string): Promise<void> => {
      await this.data.execute(
        `INSERT INTO tenant_keys (tenant_id, kind, version, master_key_id, wrapped)
         VALUES ($1, 'data', 1, 'test', 'x'), ($1, 'hmac', 1, 'test', 'x')`,
        [tenantId],
      );
    },
  } as unknown as KeyRotation;

  readonly applications = {
    insert: async (
      tenantId: string,
      input: NewApplication,
    ): Promise<{ application: Application; key?: string }> => {
      const id = randomUUID();
      await this.data.execute(
        'INSERT INTO applications (tenant_id, id, name, type, permissions) VALUES ($1, $2, $3, $4, $5)',
        [tenantId, id, input.name, input.type, JSON.stringify(input.permissions)],
      );
      if (this.failApplications) {
        throw new Error('the management application could not be written');
      }
      const key = input.key ?? generateApiKey();
      this.keys.push(key);
      return { application: { tenantId, id, name: input.name } as Application, key };
    },
  } as unknown as ApplicationsService;
}

describe('TenantsService: the default tenant and tenant creation', () => {
  let db: TestDataSource;
  let others: Collaborators;
  let tenants: TenantsService;

  const count = async (table: string): Promise<number> => {
    const [{ n }] = await db.dataLayer.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
    return n;
  };

  beforeAll(async () => {
    db = await openTestDataSource();
  });
  afterAll(() => db.close());

  // Every test starts on an empty database, as bootstrap does.
  beforeEach(async () => {
    await db.dataLayer.execute('TRUNCATE tenants, users CASCADE');
    others = new Collaborators(db.dataLayer);
    tenants = new TenantsService(
      db.dataLayer,
      new TenantsRepository(db.dataLayer),
      new MembersRepository(db.dataLayer),
      others.applications,
      others.master,
      others.rotation,
    );
  });

  it('creates one tenant with an OWNER, its keys and a management application, once', async () => {
    expect(await count('tenants')).toBe(0);
    const created = await tenants.bootstrap();
    expect(created).not.toBeNull();
    expect(created!.tenant).toMatchObject({ name: 'Default', createdAt: expect.any(Date) });
    expect(created!.application).toMatchObject({ tenantId: created!.tenant.id, name: 'Management' });
    expect(created!.key).toBe(others.keys[0]);
    const members = await db.dataLayer.query(
      `SELECT m.role, u.email FROM tenant_members m JOIN users u ON u.id = m.user_id WHERE m.tenant_id = $1`,
      [created!.tenant.id],
    );
    expect(members).toEqual([{ role: 'OWNER', email: 'owner@token-vault.local' }]);
    expect(await count('tenant_keys')).toBe(2);

    expect(await tenants.bootstrap()).toBeNull();
    expect(await tenants.bootstrap(generateApiKey())).toBeNull();
    expect(await count('tenants')).toBe(1);
    expect(await count('applications')).toBe(1);
  });

  it('does not bootstrap once any tenant exists', async () => {
    await tenants.createTenant('Later', 'owner@example.com');
    expect(await tenants.bootstrap()).toBeNull();
    expect(await count('tenants')).toBe(1);
  });

  it('gives the management application the operator-chosen key', async () => {
    const key = generateApiKey();
    expect((await tenants.bootstrap(key))?.key).toBe(key);
  });

  it('creates the default tenant exactly once when replicas start together', async () => {
    const results = await Promise.all([tenants.bootstrap(), tenants.bootstrap(), tenants.bootstrap()]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(await count('tenants')).toBe(1);
    expect(await count('applications')).toBe(1);
  });

  it('waits for the unseal before creating the default tenant on a new database', async () => {
    others.sealed = true;
    let done = false;
    const bootstrapped = tenants.bootstrap().then((created) => {
      done = true;
      return created;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(done).toBe(false);
    expect(await count('tenants')).toBe(0);
    others.sealed = false;
    expect(await bootstrapped).not.toBeNull();
  });

  it('creates a tenant all or nothing: a failure in another module leaves no tenant, owner, user or keys', async () => {
    others.failApplications = true;
    await expect(tenants.createTenant('Broken', 'broken@example.com')).rejects.toThrow(
      'could not be written',
    );
    for (const table of ['tenants', 'tenant_members', 'users', 'tenant_keys', 'applications']) {
      expect({ table, rows: await count(table) }).toEqual({ table, rows: 0 });
    }
    others.failApplications = false;
    const created = await tenants.createTenant('Fixed', 'broken@example.com');
    expect(created.tenant.name).toBe('Fixed');
    expect(await count('users')).toBe(1);
  });

  it('refuses an owner address that is not a mailbox, before writing anything', async () => {
    await expect(tenants.createTenant('Acme', 'not an address')).rejects.toMatchObject({ status: 400 });
    expect(await count('tenants')).toBe(0);
  });
});
