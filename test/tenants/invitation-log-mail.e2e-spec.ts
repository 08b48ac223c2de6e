import { TestContext, TestTenant } from '../support/test-app';

/** Without SMTP_URL the invitation e-mail goes to the log, and its delivery says so: `logged`, never `sent`. */
describe('invitation e-mail without SMTP_URL', () => {
  let ctx: TestContext;
  let tenant: TestTenant;

  beforeAll(async () => {
    ctx = await TestContext.create({ env: { SMTP_URL: '' } });
    tenant = await ctx.newTenant('Acme');
  });
  afterAll(() => ctx.close());

  it('reads delivery logged on create, get, list and resend', async () => {
    const res = await ctx.http
      .post('/tenants/self/invitations')
      .set('BT-API-KEY', tenant.key)
      .send({ email: 'dev@example.com' });
    expect(res.status).toBe(201);
    expect(res.body.delivery).toEqual({
      status: 'logged',
      attempts: 1,
      last_attempt_at: expect.any(String) as string,
      last_error: null,
    });
    expect(ctx.logs.some((line) => line.includes('e-mail (not sent: no SMTP_URL)'))).toBe(true);
    const got = await ctx.http.get(`/tenants/self/invitations/${res.body.id}`).set('BT-API-KEY', tenant.key);
    expect(got.body.delivery.status).toBe('logged');
    const listed = await ctx.http.get('/tenants/self/invitations').set('BT-API-KEY', tenant.key);
    expect(listed.body.data.map((i: { delivery: { status: string } }) => i.delivery.status)).toEqual([
      'logged',
    ]);
    const resent = await ctx.http
      .post(`/tenants/self/invitations/${res.body.id}/resend`)
      .set('BT-API-KEY', tenant.key);
    expect([resent.status, resent.body.delivery.status]).toEqual([200, 'logged']);
  });
});
