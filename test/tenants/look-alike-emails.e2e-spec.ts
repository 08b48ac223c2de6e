import { randomUUID } from 'node:crypto';
import { hashSecret } from '../../src/crypto';
import { CanonicalEmails1763791500000 } from '../../src/migrations/1763791500000-canonical-emails';
import { Mailer } from '../../src/mail/mailer';
import { CapturingMailer, secretOf } from '../support/mail';
import { expectProblem } from '../support/problems';
import { TestContext, TestTenant } from '../support/test-app';

/** Issue 25 item 3: a look-alike address must never enroll another tenant's user. */
describe('look-alike e-mail addresses', () => {
  let ctx: TestContext;
  let bank: TestTenant;
  let attacker: TestTenant;
  const mailer = new CapturingMailer();

  const invite = (tenant: TestTenant, email: unknown) =>
    ctx.http.post('/tenants/self/invitations').set('BT-API-KEY', tenant.key).send({ email });
  const accept = (token: string, first = 'Mallory', last = 'M') =>
    ctx.http.post('/invitations/accept').send({ token, first_name: first, last_name: last });
  const lastMail = () => mailer.sent[mailer.sent.length - 1];

  beforeAll(async () => {
    ctx = await TestContext.create({ overrides: [{ provide: Mailer, useValue: mailer }] });
    bank = await ctx.newTenant('Bank');
    attacker = await ctx.newTenant('Attacker');
    // vic@bank.example is a member of the bank's tenant, with his name.
    await invite(bank, 'vic@bank.example').expect(201);
    await accept(secretOf(lastMail().text), 'Victor', 'Banker').expect(200);
  });
  afterAll(() => ctx.close());

  it('mails an invitation to vic@ban\\u212A.example (KELVIN SIGN) only to the mailbox of the user it would attach to', async () => {
    const res = await invite(attacker, 'vic@ban\u212A.example');
    expect(res.status).toBe(201);
    expect(res.body.email).toBe('vic@bank.example');
    const mail = lastMail();
    // The link goes to the canonical address, the real vic's mailbox, not to the look-alike domain.
    expect(mail.to).toBe('vic@bank.example');
    const accepted = await accept(secretOf(mail.text));
    expect(accepted.status).toBe(200);
    // Whoever accepted holds the mailbox of the user the member is: byte for byte the address mailed.
    expect(accepted.body.member.user.email).toBe(mail.to);
  });

  it('never attaches a stored non-canonical invitation to the user its folded form names', async () => {
    // As a row written before addresses were canonicalised: its link went to the look-alike domain.
    const legacy = await ctx.newTenant('Legacy');
    const secret = 'legacy-secret-' + randomUUID();
    await ctx.dataSource.query(
      `INSERT INTO tenant_invitations (tenant_id, id, email, status, secret_hash, expires_at)
       VALUES ($1, $2, $3, 'PENDING', $4, now() + interval '1 day')`,
      [legacy.tenantId, randomUUID(), 'VIC@BAN\u212A.EXAMPLE', hashSecret(secret)],
    );
    const res = await accept(secret);
    expect(res.status).not.toBe(200);
    expectProblem(res, 404);
    const members = await ctx.http.get('/tenants/self/members').set('BT-API-KEY', legacy.key);
    expect(members.body.data.map((m: { role: string }) => m.role)).toEqual(['OWNER']);
  });

  it.each([
    ['a Cyrillic letter in the local part', 'v\u0456c@bank.example'],
    ['a Cyrillic letter in the domain', 'vic@b\u0430nk.example'],
    ['a Greek letter in the domain', 'vic@ban\u03BA.example'],
    ['an accented local part', 'v\u00EDc@bank.example'],
    ['a mixed-script xn-- label (b\u0430nk with Cyrillic a)', 'vic@xn--bnk-6cd.example'],
    ['a small commercial at that folds into a second @', 'vic\uFE6B@bank.example'],
  ])('refuses %s with 400', async (_label, email) => {
    expectProblem(await invite(attacker, email), 400, ['email']);
  });

  it('stores fullwidth and upper-case forms as one canonical address and compares exactly', async () => {
    const res = await invite(attacker, '\uFF4A\uFF41\uFF4E\uFF45@EXAMPLE.com');
    expect(res.status).toBe(201);
    expect(res.body.email).toBe('jane@example.com');
    expect(lastMail().to).toBe('jane@example.com');
    expectProblem(await invite(attacker, 'JANE@example.com'), 409);
    expect((await invite(attacker, 'vic@xn--bnk-qla.example')).status).toBe(201);
  });

  it('migrates stored addresses: ASCII ones lower-cased, look-alike invitations deleted, look-alike users never folded', async () => {
    const tenant = await ctx.newTenant('Migrated');
    const migration = new CanonicalEmails1763791500000();
    const runner = ctx.dataSource.createQueryRunner();
    try {
      await migration.down(runner);
      const user = (email: string) =>
        runner.query('INSERT INTO users (id, email) VALUES ($1, $2) RETURNING id', [randomUUID(), email]);
      const invitation = (email: string) =>
        runner.query(
          `INSERT INTO tenant_invitations (tenant_id, id, email, status, secret_hash, expires_at)
           VALUES ($1, $2, $3, 'PENDING', $4, now() + interval '1 day')`,
          [tenant.tenantId, randomUUID(), email, hashSecret(randomUUID())],
        );
      await user('Mixed@Case.example');
      await user('\uFF56\uFF49\uFF43@bank.example');
      await invitation('Pending@Example.COM');
      await invitation('VIC@BAN\u212A.EXAMPLE');
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    const emails = async (sql: string, params: unknown[] = []) =>
      (await ctx.dataSource.query<{ email: string }[]>(sql, params)).map((r) => r.email).sort();
    const users = await emails('SELECT email FROM users');
    expect(users).toEqual(expect.arrayContaining(['mixed@case.example', '\uFF56\uFF49\uFF43@bank.example']));
    expect(users.filter((e) => e === 'vic@bank.example')).toHaveLength(1);
    expect(
      await emails('SELECT email FROM tenant_invitations WHERE tenant_id = $1', [tenant.tenantId]),
    ).toEqual(['pending@example.com']);
    // The fullwidth user keeps its address, which no invitation (ASCII, exact) can ever reach.
    await invite(tenant, '\uFF56\uFF49\uFF43@bank.example').expect(201);
    const res = await accept(secretOf(lastMail().text), 'Victor', 'Again');
    expect(res.body.member.user.email).toBe('vic@bank.example');
    expect((await emails('SELECT email FROM users')).filter((e) => e.includes('bank.example'))).toHaveLength(
      2,
    );
  });
});
