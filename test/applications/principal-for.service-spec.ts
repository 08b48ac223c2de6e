import { randomUUID } from 'node:crypto';
import { AccessRule } from '../../src/access/access-rules';
import { ApplicationType } from '../../src/access/application-type';
import { Permission } from '../../src/access/permissions';
import { ApplicationCache } from '../../src/applications/application-cache';
import { ApplicationKeysRepository } from '../../src/applications/application-keys.repository';
import { ApplicationPrincipals } from '../../src/applications/application-principals.service';
import { ApplicationsRepository } from '../../src/applications/applications.repository';
import { generateApiKey, hashSecret } from '../../src/crypto';
import { ChangeFeed } from '../../src/database/change-feed';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';
import { rule } from '../support/token-factory';

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

/** How reactors and proxies act as their stored application, without its key. */
describe('ApplicationPrincipals.principalFor', () => {
  let db: TestDataSource;
  let applications: ApplicationsRepository;
  let keys: ApplicationKeysRepository;
  let tenantId: string;
  const feeds: ChangeFeed[] = [];

  /** One replica's view: its change feed, application cache and principals. */
  const replica = async (): Promise<{ cache: ApplicationCache; principals: ApplicationPrincipals }> => {
    const feed = new ChangeFeed(db.database, db.dataLayer);
    await feed.onModuleInit();
    feeds.push(feed);
    const cache = new ApplicationCache(feed);
    return { cache, principals: new ApplicationPrincipals(applications, cache) };
  };
  let local: { cache: ApplicationCache; principals: ApplicationPrincipals };

  const newApplication = async (
    tenant: string,
    type: ApplicationType,
    permissions: Permission[],
    rules: AccessRule[] = [],
  ): Promise<{ id: string; key: string }> => {
    const key = generateApiKey();
    const id = await db.dataLayer.transaction(async () => {
      const app = await applications.insert({
        tenantId: tenant,
        id: randomUUID(),
        name: `${type} app`,
        type,
        permissions,
        rules,
        keyVersion: 0,
        createdBy: null,
        modifiedBy: null,
        modifiedAt: null,
      });
      await keys.issue(tenant, app.id, hashSecret(key), null);
      return app.id;
    });
    return { id, key };
  };
  /** What ApplicationsService does on an update or a deletion: the change and the eviction, in one transaction. */
  const changing = (id: string, change: () => Promise<unknown>): Promise<void> =>
    db.dataLayer.transaction(async () => {
      await change();
      await local.cache.changed(id);
    });

  beforeAll(async () => {
    db = await openTestDataSource();
    applications = new ApplicationsRepository(db.dataLayer);
    keys = new ApplicationKeysRepository(db.dataLayer);
    tenantId = await db.insertTenant('Acme');
    local = await replica();
  });
  afterAll(async () => {
    await Promise.all(feeds.map((feed) => feed.onModuleDestroy()));
    await db.close();
  });

  it('gives the stored permissions and rules, like authenticate does with the key', async () => {
    const app = await newApplication(
      tenantId,
      'private',
      ['token:read'],
      [rule('/pci/', 'reveal', ['token:use'])],
    );
    const principal = await local.principals.principalFor(tenantId, app.id);
    expect(principal).toEqual(await local.principals.authenticate(app.key));
    expect(principal).toMatchObject({ tenantId, applicationId: app.id, applicationType: 'private' });
    expect([...(principal?.permissions ?? [])].sort()).toEqual(['token:read', 'token:use']);
  });

  it('is null for another tenant’s application and for an unknown one', async () => {
    const other = await db.insertTenant('Other');
    const theirs = await newApplication(other, 'private', ['token:read']);
    expect(await local.principals.principalFor(tenantId, theirs.id)).toBeNull();
    expect(await local.principals.principalFor(tenantId, '00000000-0000-4000-8000-000000000000')).toBeNull();
  });

  it('sees an update or a deletion at once, though cached', async () => {
    const app = await newApplication(tenantId, 'private', ['token:read']);
    expect((await local.principals.principalFor(tenantId, app.id))?.permissions.has('token:read')).toBe(true);
    await changing(app.id, () =>
      applications.update(tenantId, app.id, { name: 'narrowed', permissions: ['token:create'] }),
    );
    const narrowed = await local.principals.principalFor(tenantId, app.id);
    expect([...(narrowed?.permissions ?? [])]).toEqual(['token:create']);
    await changing(app.id, () => applications.delete(tenantId, app.id));
    expect(await local.principals.principalFor(tenantId, app.id)).toBeNull();
    expect(await local.principals.authenticate(app.key)).toBeNull();
  });

  onPostgres('is evicted on another replica through NOTIFY', async () => {
    const remote = await replica();
    const app = await newApplication(tenantId, 'private', ['token:read']);
    expect(await remote.principals.principalFor(tenantId, app.id)).not.toBeNull();
    await changing(app.id, () => applications.delete(tenantId, app.id));
    let gone = false;
    for (const until = Date.now() + 2000; Date.now() < until && !gone;) {
      gone = (await remote.principals.principalFor(tenantId, app.id)) === null;
      if (!gone) {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    // Far below the cache TTL (10 s): only the notification explains it.
    expect(gone).toBe(true);
  });
});
