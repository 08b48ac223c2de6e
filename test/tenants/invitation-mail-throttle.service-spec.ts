import { ApiError } from '../../src/common/api-error';
import { AppConfig } from '../../src/config/app-config';
import { InvitationMailThrottle } from '../../src/tenants/invitations/invitation-mail-throttle';
import { InvitationMailsRepository } from '../../src/tenants/invitations/invitation-mails.repository';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';
import { TestClock } from '../support/test-clock';

const MINUTE = 60_000;
const START = Date.parse('2026-11-23T10:00:00Z');

/** The invitation e-mail throttle with its real repository on the test run's database (no application boot). */
describe('InvitationMailThrottle', () => {
  let db: TestDataSource;
  let throttle: InvitationMailThrottle;
  let tenant: string;

  /** A send as create and resend take it: in their transaction. */
  const take = (email: string, at: number, tenantId = tenant): Promise<void> =>
    db.dataLayer.transaction(() => throttle.take(tenantId, email, new Date(at)));
  const refusal = async (email: string, at: number): Promise<ApiError> => {
    const err: unknown = await take(email, at).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  };
  const counted = async (): Promise<number> => {
    const [{ n }] = await db.dataLayer.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM invitation_mails WHERE tenant_id = $1',
      [tenant],
    );
    return n;
  };

  beforeAll(async () => {
    db = await openTestDataSource();
    const config = { invitationMailsPerAddressPerHour: 2, invitationMailsPerTenantPerHour: 3 } as AppConfig;
    throttle = new InvitationMailThrottle(
      new InvitationMailsRepository(db.dataLayer, new TestClock()),
      config,
    );
  });
  afterAll(() => db.close());
  beforeEach(async () => {
    tenant = await db.insertTenant();
  });

  it('bounds the e-mails to one address, then to the tenant, each hour, saying when to retry', async () => {
    await take('a@example.com', START);
    await take('a@example.com', START + 10 * MINUTE);
    const perAddress = await refusal('a@example.com', START + 20 * MINUTE);
    expect(perAddress.status).toBe(429);
    expect(perAddress.headers).toEqual({ 'Retry-After': String(40 * 60) });

    await take('b@example.com', START + 30 * MINUTE);
    const perTenant = await refusal('c@example.com', START + 30 * MINUTE);
    expect(perTenant.detail).toContain('per tenant');
    expect(perTenant.headers).toEqual({ 'Retry-After': String(30 * 60) });
    expect(await counted()).toBe(3);
  });

  it('forgets the sends an hour old, and counts a refused send nowhere', async () => {
    await take('a@example.com', START);
    await take('a@example.com', START + MINUTE);
    await refusal('a@example.com', START + 2 * MINUTE);
    expect(await counted()).toBe(2);
    await take('a@example.com', START + 60 * MINUTE);
    expect(await counted()).toBe(2);
  });

  it('counts each tenant apart', async () => {
    const other = await db.insertTenant('Other');
    for (const email of ['a@example.com', 'b@example.com', 'c@example.com']) {
      await take(email, START);
    }
    await refusal('d@example.com', START);
    await take('d@example.com', START, other);
  });

  it('lets concurrent sends of one tenant through no further than the limit', async () => {
    const results = await Promise.allSettled(
      ['a', 'b', 'c', 'd', 'e'].map((name) => take(`${name}@example.com`, START)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(await counted()).toBe(3);
  });
});
