import { Principal } from '../../src/access/principal';
import { Clock } from '../../src/common/clock';
import { AppConfig } from '../../src/config/app-config';
import { TenantCipher } from '../../src/crypto/tenant-cipher.service';
import { Events } from '../../src/events/events';
import { EventsRepository } from '../../src/events/events.repository';
import { ProxiesRepository } from '../../src/proxies/proxies.repository';
import { ProxiesService } from '../../src/proxies/proxies.service';
import { ProxyCache } from '../../src/proxies/proxy-cache';
import { AuditDouble, bindAnyApplication, testPrincipal } from '../support/service-doubles';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';
import { tenantDataKeys } from '../support/tenant-data-keys';
import { localChangeFeed } from '../support/local-change-feed';
import { ExpressionEngine } from '../../src/expressions';

/** ProxiesService on its real repository and the real outbox, without the app, on both databases. */
describe('ProxiesService', () => {
  let db: TestDataSource;
  let proxies: ProxiesService;
  let caller: Principal;
  const audit = new AuditDouble();

  const outbox = async (): Promise<string[]> =>
    (
      await db.dataLayer.query<{ event_type: string }>(
        'SELECT event_type FROM webhook_deliveries WHERE tenant_id = $1 ORDER BY event_type',
        [caller.tenantId],
      )
    ).map((row) => row.event_type);

  beforeAll(async () => {
    db = await openTestDataSource();
    const data = db.dataLayer;
    const clock = new Clock();
    proxies = new ProxiesService(
      new ProxiesRepository(data),
      data,
      bindAnyApplication,
      new TenantCipher(tenantDataKeys().keys),
      new ProxyCache(localChangeFeed()),
      clock,
      { proxyAllowLoopback: false } as AppConfig,
      audit.service,
      new Events(new EventsRepository(data), clock),
      new ExpressionEngine(),
    );
    caller = testPrincipal(await db.insertTenant());
    await data.execute(
      `INSERT INTO webhooks (tenant_id, id, name, url, events, status, secret)
       VALUES ($1, gen_random_uuid(), 'hooks', 'https://hooks.example.test/', $2, 'enabled', '\\x00')`,
      [caller.tenantId, ['proxy.created', 'proxy.updated', 'proxy.deleted']],
    );
  });

  afterAll(() => db.close());

  it('creates, finds by key, replaces and deletes a proxy, each change with its event', async () => {
    const created = await proxies.create(caller, {
      name: 'partner',
      destination_url: 'https://partner.example.test/api',
      configuration: { API_KEY: 'secret' },
    });
    expect(created).toMatchObject({ name: 'partner', configuration: { API_KEY: 'secret' } });
    const byKey = await proxies.findByKey(created.key);
    expect(byKey?.proxy.id).toBe(created.id);
    expect(byKey?.configuration).toEqual({ API_KEY: 'secret' });

    await proxies.patch(caller, created.id, { destination_url: 'https://other.example.test/' });
    // The cached proxy was evicted by the change: the key now routes to the new destination.
    expect((await proxies.findByKey(created.key))?.proxy.destinationUrl).toBe('https://other.example.test/');
    expect((await proxies.list(caller, { page: 1, size: 20 })).data.map((p) => p.id)).toEqual([created.id]);

    await proxies.delete(caller, created.id);
    expect(await proxies.findByKey(created.key)).toBeNull();
    await expect(proxies.get(caller, created.id)).rejects.toMatchObject({ status: 404 });
    await expect(proxies.delete(caller, created.id)).rejects.toMatchObject({ status: 404 });
    expect(await outbox()).toEqual(['proxy.created', 'proxy.deleted', 'proxy.updated']);
  });

  it('changes nothing, and publishes nothing, when the audit record cannot be written', async () => {
    const kept = await proxies.create(caller, {
      name: 'kept',
      destination_url: 'https://kept.example.test/',
    });
    const before = await outbox();
    await audit.failing(async () => {
      await expect(
        proxies.update(caller, kept.id, { name: 'renamed', destination_url: kept.destination_url }),
      ).rejects.toMatchObject({ status: 503 });
      await expect(proxies.delete(caller, kept.id)).rejects.toMatchObject({ status: 503 });
    });
    expect((await proxies.get(caller, kept.id)).name).toBe('kept');
    expect(await outbox()).toEqual(before);
  });
});
