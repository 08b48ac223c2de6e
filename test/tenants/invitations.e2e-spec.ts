import { Clock } from '../../src/common/clock';
import { InvitationExpiryService } from '../../src/jobs/invitation-expiry.service';
import { Mailer } from '../../src/mail/mailer';
import { CapturingMailer, secretOf } from '../support/mail';
import { expectProblem } from '../support/problems';
import { TestClock } from '../support/test-clock';
import { TestContext, TestTenant } from '../support/test-app';

const HOUR = 3600_000;

describe('invitations (spec §3 state table)', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  const clock = new TestClock();
  const mailer = new CapturingMailer();
  const t0 = Date.parse('2026-11-23T10:00:00Z');

  beforeAll(async () => {
    ctx = await TestContext.create({
      overrides: [
        { provide: Clock, useValue: clock },
        { provide: Mailer, useValue: mailer },
      ],
    });
    tenant = await ctx.newTenant('Acme');
  });
  beforeEach(() => clock.set(t0));
  afterAll(() => ctx.close());

  const api = (key = tenant.key) => ({
    create: (email: unknown) =>
      ctx.http.post('/tenants/self/invitations').set('BT-API-KEY', key).send({ email }),
    get: (id: string) => ctx.http.get(`/tenants/self/invitations/${id}`).set('BT-API-KEY', key),
    list: (q = '') => ctx.http.get(`/tenants/self/invitations${q}`).set('BT-API-KEY', key),
    resend: (id: string) => ctx.http.post(`/tenants/self/invitations/${id}/resend`).set('BT-API-KEY', key),
    delete: (id: string) => ctx.http.delete(`/tenants/self/invitations/${id}`).set('BT-API-KEY', key),
  });
  const accept = (token: string, first = 'Jane', last = 'Doe') =>
    ctx.http.post('/invitations/accept').send({ token, first_name: first, last_name: last });
  const lastSecret = (): string => secretOf(mailer.sent[mailer.sent.length - 1].text);

  it('creates a PENDING invitation for 72 hours and e-mails a link; the secret is never in the API or logs', async () => {
    const res = await api().create('jane@example.com');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tenant_id: tenant.tenantId,
      email: 'jane@example.com',
      role: 'ADMIN',
      status: 'PENDING',
      expires_at: new Date(t0 + 72 * HOUR).toISOString(),
      created_by: expect.any(String),
      created_at: expect.any(String),
      modified_by: null,
      modified_at: null,
      delivery: {
        status: 'sent',
        attempts: 1,
        last_attempt_at: new Date(t0).toISOString(),
        last_error: null,
      },
    });
    const mail = mailer.sent[mailer.sent.length - 1];
    expect(mail.to).toBe('jane@example.com');
    expect(mail.text).toContain('Acme');
    expect(mail.html).toContain('Acme');
    expect(mail.text).toContain('http://localhost:3000/invitations/accept?token=');
    const secret = lastSecret();
    expect(secret.length).toBeGreaterThanOrEqual(22);
    expect(JSON.stringify((await api().list()).body)).not.toContain(secret);
    expect(ctx.logs.join('\n')).not.toContain(secret);
    const stored: { secret_hash: string }[] = await ctx.dataSource.query(
      'SELECT secret_hash FROM tenant_invitations',
    );
    expect(JSON.stringify(stored)).not.toContain(secret);
    // The outbox kept the secret (sealed) only until the e-mail was sent.
    expect(await ctx.dataSource.query('SELECT secret FROM invitation_outbox')).toEqual([{ secret: null }]);
  });

  it.each([
    'not-an-address',
    'a@',
    '@example.com',
    'jane@example',
    'Jane <jane@example.com>',
    'a b@example.com',
    42,
  ])('refuses %p with 400', async (email) => {
    expectProblem(await api().create(email), 400, ['email']);
  });

  it('refuses a member’s address and a second pending invitation with 409', async () => {
    expectProblem(await api().create('owner+acme@example.com'), 409);
    await api().create('dup@example.com').expect(201);
    expectProblem(await api().create('DUP@example.com'), 409);
  });

  it('reads EXPIRED from expires_at on, before and after the expiry job', async () => {
    const { body } = await api().create('late@example.com');
    clock.set(t0 + 72 * HOUR - 1);
    expect((await api().get(body.id)).body.status).toBe('PENDING');
    clock.set(t0 + 72 * HOUR);
    expect((await api().get(body.id)).body.status).toBe('EXPIRED');
    expect((await api().list('?status=EXPIRED')).body.data.map((i: { id: string }) => i.id)).toContain(
      body.id,
    );
    expect((await api().list('?status=PENDING')).body.data.map((i: { id: string }) => i.id)).not.toContain(
      body.id,
    );
    expect(await ctx.get(InvitationExpiryService).run()).toBeGreaterThanOrEqual(1);
    const [row]: { status: string }[] = await ctx.dataSource.query(
      'SELECT status FROM tenant_invitations WHERE id = $1',
      [body.id],
    );
    expect(row.status).toBe('EXPIRED');
    expectProblem(await accept(lastSecret()), 410);
  });

  it('resends from EXPIRED and from PENDING: PENDING for 72 more hours, earlier links void', async () => {
    const { body } = await api().create('again@example.com');
    const first = lastSecret();
    clock.set(t0 + 80 * HOUR);
    const fromExpired = await api().resend(body.id);
    expect(fromExpired.status).toBe(200);
    expect(fromExpired.body).toMatchObject({
      status: 'PENDING',
      expires_at: new Date(t0 + 152 * HOUR).toISOString(),
    });
    const second = lastSecret();
    expect(second).not.toBe(first);
    const fromPending = await api().resend(body.id);
    expect(fromPending.body.status).toBe('PENDING');
    const third = lastSecret();
    expectProblem(await accept(first), 404);
    expectProblem(await accept(second), 404);
    const ok = await accept(third, 'Ann', 'Lee');
    expect(ok.status).toBe(200);
    expect(ok.body.member).toMatchObject({
      tenant_id: tenant.tenantId,
      role: 'ADMIN',
      user: { email: 'again@example.com', first_name: 'Ann', last_name: 'Lee' },
    });
    expectProblem(await api().get(body.id), 404);
    expectProblem(await accept(third), 404);
    const members = await ctx.http.get('/tenants/self/members').set('BT-API-KEY', tenant.key);
    expect(members.body.data.map((m: { user: { email: string } }) => m.user.email)).toContain(
      'again@example.com',
    );
  });

  it('voids the link of a deleted invitation', async () => {
    const { body } = await api().create('gone@example.com');
    const secret = lastSecret();
    expect((await api().delete(body.id)).status).toBe(204);
    expectProblem(await accept(secret), 404);
    expectProblem(await api().delete(body.id), 404);
  });

  it('needs create and update to resend, and hides other tenants’ invitations', async () => {
    const { body } = await api().create('perm@example.com');
    const creator = await ctx.newApplication(tenant, 'management', [
      'tenant:invitation:create',
      'tenant:invitation:read',
    ]);
    expectProblem(await api(creator.key).resend(body.id), 403);
    const other = await ctx.newTenant('Other');
    expectProblem(await api(other.key).get(body.id), 404);
    expectProblem(await api(other.key).resend(body.id), 404);
    expectProblem(await api(other.key).delete(body.id), 404);
    expect((await api(other.key).list()).body.data).toEqual([]);
  });

  it('validates accept bodies and rate limits accepting per IP', async () => {
    expectProblem(await ctx.http.post('/invitations/accept').send({ token: 'x' }), 400, [
      'first_name',
      'last_name',
    ]);
    let limited = false;
    for (let i = 0; i < 30 && !limited; i++) {
      const res = await accept(`guess${i}`);
      if (res.status === 429) {
        limited = true;
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      } else {
        expect(res.status).toBe(404);
      }
    }
    expect(limited).toBe(true);
  });
});

describe('members', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  const mailer = new CapturingMailer();

  beforeAll(async () => {
    ctx = await TestContext.create({ overrides: [{ provide: Mailer, useValue: mailer }] });
    tenant = await ctx.newTenant('Acme');
  });
  afterAll(() => ctx.close());

  const members = (q = '', key = tenant.key) =>
    ctx.http.get(`/tenants/self/members${q}`).set('BT-API-KEY', key);

  async function invitedMember(email: string): Promise<{ id: string; user: { id: string } }> {
    await ctx.http
      .post('/tenants/self/invitations')
      .set('BT-API-KEY', tenant.key)
      .send({ email })
      .expect(201);
    const res = await ctx.http
      .post('/invitations/accept')
      .send({ token: secretOf(mailer.sent[mailer.sent.length - 1].text), first_name: 'A', last_name: 'B' });
    return res.body.member as { id: string; user: { id: string } };
  }

  it('lists members with their user, filters by user_id, and caps the page at 50', async () => {
    const bob = await invitedMember('bob@example.com');
    const all = await members();
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(2);
    expect(all.body.data.find((m: { role: string }) => m.role === 'OWNER').user).toMatchObject({
      email: 'owner+acme@example.com',
    });
    const filtered = await members(`?user_id=${bob.user.id}`);
    expect(filtered.body.data.map((m: { id: string }) => m.id)).toEqual([bob.id]);
    expect((await members('?size=50')).status).toBe(200);
    expectProblem(await members('?size=51'), 400, ['size']);
    expectProblem(await members('?user_id=nope'), 400, ['user_id']);
  });

  it('refuses to remove the OWNER (422), removes a member at once (204), and hides other tenants', async () => {
    const owner = (await members()).body.data.find((m: { role: string }) => m.role === 'OWNER');
    expectProblem(
      await ctx.http.delete(`/tenants/self/members/${owner.id}`).set('BT-API-KEY', tenant.key),
      422,
    );
    const carol = await invitedMember('carol@example.com');
    const other = await ctx.newTenant('Other');
    expectProblem(
      await ctx.http.delete(`/tenants/self/members/${carol.id}`).set('BT-API-KEY', other.key),
      404,
    );
    expect(
      (await ctx.http.delete(`/tenants/self/members/${carol.id}`).set('BT-API-KEY', tenant.key)).status,
    ).toBe(204);
    expect((await members()).body.data.map((m: { id: string }) => m.id)).not.toContain(carol.id);
    // Her membership was her access: she can be invited again.
    expect(
      (
        await ctx.http
          .post('/tenants/self/invitations')
          .set('BT-API-KEY', tenant.key)
          .send({ email: 'carol@example.com' })
      ).status,
    ).toBe(201);
    expect(
      (await members('', other.key)).body.data.map((m: { user: { email: string } }) => m.user.email),
    ).toEqual(['owner+other@example.com']);
  });

  it('needs the member permissions', async () => {
    const app = await ctx.newApplication(tenant, 'management', ['tenant:invitation:read']);
    expectProblem(await members('', app.key), 403);
    expectProblem(
      await ctx.http
        .put(`/tenants/self/members/${app.id}`)
        .set('BT-API-KEY', app.key)
        .send({ role: 'ADMIN' }),
      403,
    );
  });

  it('changes a member role with PUT, never the OWNER and never to OWNER, and shows created_date', async () => {
    const dave = await invitedMember('dave@example.com');
    const put = (id: string, body: object, key = tenant.key) =>
      ctx.http.put(`/tenants/self/members/${id}`).set('BT-API-KEY', key).send(body);
    const management = await ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key).expect(200);
    const res = await put(dave.id, { role: 'READ_ONLY' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: dave.id, role: 'READ_ONLY', modified_by: management.body.id });
    expect(res.body.created_date).toBe(res.body.created_at);
    expect(res.body.modified_at).toEqual(expect.any(String));
    const listed = (await members()).body.data.find((m: { id: string }) => m.id === dave.id);
    expect(listed).toEqual(res.body);
    expect((await put(dave.id, { role: 'ADMIN' })).body.role).toBe('ADMIN');
    expectProblem(await put(dave.id, { role: 'OWNER' }), 400, ['role']);
    expectProblem(await put(dave.id, {}), 400, ['role']);
    const owner = (await members()).body.data.find((m: { role: string }) => m.role === 'OWNER');
    expectProblem(await put(owner.id, { role: 'ADMIN' }), 422);
    const other = await ctx.newTenant('Elsewhere');
    expectProblem(await put(dave.id, { role: 'ADMIN' }, other.key), 404);
  });

  it('echoes the invitation role and refuses roles an invitation cannot grant', async () => {
    const invite = (body: object) =>
      ctx.http.post('/tenants/self/invitations').set('BT-API-KEY', tenant.key).send(body);
    const res = await invite({ email: 'erin@example.com', role: 'ADMIN' });
    expect(res.status).toBe(201);
    expect(res.body.role).toBe('ADMIN');
    expectProblem(await invite({ email: 'frank@example.com', role: 'OWNER' }), 400, ['role']);
  });
});
