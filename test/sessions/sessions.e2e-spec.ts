import { Clock } from '../../src/common/clock';
import { PurgeService } from '../../src/jobs/purge.service';
import { TestClock } from '../support/test-clock';
import { TestApplication, TestContext, TestTenant } from '../support/test-app';
import { rule } from '../support/token-factory';

const MINUTE = 60_000;

/** Sessions over HTTP: created by a public key, authorized once by a private key, then used until expiry. */
describe('sessions', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let other: TestTenant;
  let page: TestApplication;
  let backend: TestApplication;
  let token: string;
  let second: string;
  const clock = new TestClock();

  beforeAll(async () => {
    ctx = await TestContext.create({ overrides: [{ provide: Clock, useValue: clock }] });
    tenant = await ctx.newTenant('Sessions');
    other = await ctx.newTenant('Elsewhere');
    page = await ctx.newApplication(tenant, 'public', ['token:create']);
    backend = await ctx.newApplication(
      tenant,
      'private',
      [],
      [rule('/', 'reveal', ['token:create', 'token:read', 'token:delete'])],
    );
    token = await create({ number: '4242' });
    second = await create({ number: '5555' });
  });
  afterAll(() => ctx.close());
  afterEach(() => clock.reset());

  async function create(data: unknown, key = backend.key): Promise<string> {
    const res = await ctx.http
      .post('/tokens')
      .set('BT-API-KEY', key)
      .send({ type: 'token', data })
      .expect(201);
    return res.body.id as string;
  }

  async function newSession(
    key = page.key,
  ): Promise<{ session_key: string; nonce: string; expires_at: string }> {
    const res = await ctx.http.post('/sessions').set('BT-API-KEY', key).expect(201);
    return res.body;
  }

  const authorize = (body: object, key = backend.key) =>
    ctx.http.post('/sessions/authorize').set('BT-API-KEY', key).send(body);
  const read = (key: string, id: string) => ctx.http.get(`/tokens/${id}`).set('BT-API-KEY', key);
  const onlyToken = (id: string, transform = 'reveal') => [
    {
      priority: 1,
      transform,
      permissions: ['token:read'],
      conditions: [{ attribute: 'id', operator: 'equals', value: id }],
    },
  ];

  it('creates a session with a public key: a session key of its own prefix, a nonce, 3 minutes', async () => {
    clock.set(new Date('2030-01-01T00:00:00Z'));
    const created = await newSession();
    expect(created.session_key).toMatch(/^key_sess_[1-9A-HJ-NP-Za-km-z]{44}$/);
    expect(created.nonce).toMatch(/^[1-9A-HJ-NP-Za-km-z]{22}$/);
    expect(created.expires_at).toBe('2030-01-01T00:03:00.000Z');
    const stored = await ctx.dataSource.query('SELECT * FROM sessions WHERE application_id = $1', [page.id]);
    const text = JSON.stringify(stored);
    expect(text).not.toContain(created.session_key);
    expect(text).not.toContain(created.nonce);
  });

  it('refuses to create a session with a private, management or session key (403)', async () => {
    await ctx.http.post('/sessions').set('BT-API-KEY', backend.key).expect(403);
    await ctx.http.post('/sessions').set('BT-API-KEY', tenant.key).expect(403);
    const { session_key } = await newSession();
    await ctx.http.post('/sessions').set('BT-API-KEY', session_key).expect(403);
    await ctx.http.post('/sessions').expect(401);
  });

  it('an unauthorized session key may do nothing (403); once authorized it reads exactly that token', async () => {
    const { session_key, nonce } = await newSession();
    await read(session_key, token).expect(403);
    await authorize({ nonce, rules: onlyToken(token) }).expect(204);
    const revealed = await read(session_key, token).expect(200);
    expect(revealed.body.data).toEqual({ number: '4242' });
    await read(session_key, second).expect(403);
    // A rule naming token ids shows none of them in a list.
    const listed = await ctx.http.get('/tokens').set('BT-API-KEY', session_key).expect(200);
    expect(listed.body.data).toEqual([]);
    await ctx.http.delete(`/tokens/${token}`).set('BT-API-KEY', session_key).expect(403);
    await ctx.http
      .post('/tokens')
      .set('BT-API-KEY', session_key)
      .send({ type: 'token', data: 'x' })
      .expect(403);
  });

  it('authorizes with permissions (default transforms) and with a container rule', async () => {
    const masked = await newSession();
    await authorize({ nonce: masked.nonce, permissions: ['token:read'] }).expect(204);
    const read1 = await read(masked.session_key, token).expect(200);
    expect(read1.body.data).not.toEqual({ number: '4242' });
    const byContainer = await newSession();
    await authorize({
      nonce: byContainer.nonce,
      rules: [{ priority: 1, container: '/', transform: 'redact', permissions: ['token:read'] }],
    }).expect(204);
    expect((await read(byContainer.session_key, second).expect(200)).body.data).toBeUndefined();
  });

  it('authorizes a session once (409), only with a private key (403), by a nonce of its tenant (404)', async () => {
    const { nonce } = await newSession();
    await authorize({ nonce, rules: onlyToken(token) }, page.key).expect(403);
    await authorize({ nonce, rules: onlyToken(token) }, tenant.key).expect(403);
    await authorize({ nonce: 'unknown', rules: onlyToken(token) }).expect(404);
    await authorize({ nonce, rules: onlyToken(token) }).expect(204);
    await authorize({ nonce, rules: onlyToken(second) }).expect(409);
  });

  it("refuses a session of tenant A authorized by tenant B's application (404), and A's tokens stay out of reach", async () => {
    const foreign = await ctx.newApplication(other, 'private', [], [rule('/', 'reveal', ['token:read'])]);
    const { session_key, nonce } = await newSession();
    await authorize({ nonce, rules: onlyToken(token) }, foreign.key).expect(404);
    await read(session_key, token).expect(403);
    const theirPage = await ctx.newApplication(other, 'public', []);
    const theirs = await newSession(theirPage.key);
    await authorize({ nonce: theirs.nonce, rules: onlyToken(token) }, foreign.key).expect(204);
    await read(theirs.session_key, token).expect(404);
  });

  it('refuses an authorization wider than the authorizing application (403), and bad input (400)', async () => {
    const masking = await ctx.newApplication(tenant, 'private', [], [rule('/pci/', 'mask', ['token:read'])]);
    const { session_key, nonce } = await newSession();
    const wider = await authorize({ nonce, rules: onlyToken(token, 'reveal') }, masking.key).expect(403);
    expect(wider.body.detail).toContain('token:read with reveal on /');
    await authorize({ nonce, permissions: ['token:delete'] }, masking.key).expect(403);
    await authorize({ nonce, permissions: ['application:create'] }).expect(400);
    await authorize({ nonce, permissions: ['token:bogus'] }).expect(400);
    await authorize({ nonce }).expect(400);
    await authorize({
      nonce,
      rules: [{ priority: 1, transform: 'reveal', permissions: ['token:read'] }],
    }).expect(400);
    await authorize({
      nonce,
      rules: [{ ...onlyToken(token)[0], container: '/' }],
    }).expect(400);
    await authorize({ nonce, permissions: ['token:read'], expires_at: '2001-01-01T00:00:00Z' }).expect(400);
    await read(session_key, token).expect(403);
    const narrower = {
      priority: 1,
      transform: 'mask',
      permissions: ['token:read'],
      conditions: [
        { attribute: 'container', operator: 'starts_with', value: '/pci/' },
        { attribute: 'id', operator: 'equals', value: token },
      ],
    };
    await authorize({ nonce, rules: [narrower] }, masking.key).expect(204);
  });

  it('stops working at expiry (401), also when an authorization extends it, and the purge job deletes it', async () => {
    clock.set(new Date('2030-02-01T00:00:00Z'));
    const short = await newSession();
    await authorize({ nonce: short.nonce, rules: onlyToken(token) }).expect(204);
    const long = await newSession();
    await authorize({
      nonce: long.nonce,
      rules: onlyToken(token),
      expires_at: '2030-02-01T00:30:00Z',
    }).expect(204);
    clock.advance(3 * MINUTE);
    await read(short.session_key, token).expect(401);
    await read(long.session_key, token).expect(200);
    const late = await newSession();
    clock.advance(3 * MINUTE);
    await authorize({ nonce: late.nonce, permissions: ['token:read'] }).expect(404);
    clock.advance(30 * MINUTE);
    await read(long.session_key, token).expect(401);
    await ctx.get(PurgeService).runSessions();
    const left = await ctx.dataSource.query(
      'SELECT count(*)::int AS n FROM sessions WHERE expires_at <= $1',
      [clock.now()],
    );
    expect(left[0].n).toBe(0);
  });

  it('refuses an expires_at more than 60 minutes ahead (400)', async () => {
    const { nonce } = await newSession();
    const far = new Date(Date.now() + 61 * MINUTE).toISOString();
    await authorize({ nonce, permissions: ['token:read'], expires_at: far }).expect(400);
  });

  it('loses what it was granted when the authorizing application no longer holds it', async () => {
    const narrowing = await ctx.newApplication(tenant, 'private', [], [rule('/', 'reveal', ['token:read'])]);
    const { session_key, nonce } = await newSession();
    await authorize({ nonce, rules: onlyToken(token) }, narrowing.key).expect(204);
    await read(session_key, token).expect(200);
    await ctx.http
      .put(`/applications/${narrowing.id}`)
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'narrowed', rules: [rule('/', 'mask', ['token:read'])] })
      .expect(200);
    await read(session_key, token).expect(403);
    await ctx.http.delete(`/applications/${narrowing.id}`).set('BT-API-KEY', tenant.key).expect(204);
    await read(session_key, token).expect(401);
  });

  it('audits every use as the session: actor_type session, its id, the authorizing application', async () => {
    const { session_key, nonce } = await newSession();
    await authorize({ nonce, rules: onlyToken(token) }).expect(204);
    await read(session_key, token).expect(200);
    await read(session_key, second).expect(403);
    const logs = await ctx.http
      .get('/logs')
      .query({ entity_type: 'token', size: 100 })
      .set('BT-API-KEY', tenant.key)
      .expect(200);
    const sessionId = (
      await ctx.dataSource.query(
        'SELECT id FROM sessions WHERE authorized_by = $1 ORDER BY created_at DESC',
        [backend.id],
      )
    )[0].id as string;
    const mine = (
      logs.body.data as {
        actor_id: string;
        actor_type: string;
        message: string;
        outcome: string;
        entity_id: string;
      }[]
    ).filter((l) => l.actor_id === sessionId);
    expect(mine.map((l) => [l.actor_type, l.outcome, l.entity_id])).toEqual(
      expect.arrayContaining([
        ['session', 'success', token],
        ['session', 'denied', second],
      ]),
    );
    for (const entry of mine) {
      expect(entry.message).toContain(
        `session of application ${page.id}, authorized by application ${backend.id}`,
      );
    }
    const created = await ctx.http
      .get('/logs')
      .query({ entity_id: page.id, size: 100 })
      .set('BT-API-KEY', tenant.key)
      .expect(200);
    const ops = (created.body.data as { operation: string }[]).map((l) => l.operation);
    expect(ops).toEqual(expect.arrayContaining(['session.create', 'session.authorize']));
  });
});
