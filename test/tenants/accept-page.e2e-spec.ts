import { Mailer } from '../../src/mail/mailer';
import { describeInBrowser, listenLocally, withBrowser } from '../support/browser';
import { CapturingMailer, secretOf } from '../support/mail';
import { TestContext, TestTenant } from '../support/test-app';

describeInBrowser('the invitation acceptance page in headless Chromium', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let base: string;
  const mailer = new CapturingMailer();

  beforeAll(async () => {
    ctx = await TestContext.create({ overrides: [{ provide: Mailer, useValue: mailer }] });
    base = await listenLocally(ctx);
    tenant = await ctx.newTenant('Acme');
  });
  afterAll(() => ctx.close());

  it('is filled in and submitted; the member then appears in the API', async () => {
    await ctx.http
      .post('/tenants/self/invitations')
      .set('BT-API-KEY', tenant.key)
      .send({ email: 'rose@example.com' })
      .expect(201);
    const token = secretOf(mailer.sent[mailer.sent.length - 1].text);
    await withBrowser(async (browser) => {
      const page = await browser.newPage();
      const blocked: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(base)) {
          blocked.push(r.url());
        }
      });
      const response = await page.goto(`${base}/invitations/accept?token=${token}`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toContain("default-src 'none'");
      expect(await page.textContent('h1')).toBe('Join Acme');
      await page.getByLabel('First name').fill('Rose');
      await page.getByLabel('Last name').fill('Tyler');
      await page.getByRole('button', { name: 'Accept the invitation' }).click();
      await page.waitForSelector('[role=status]');
      expect(await page.textContent('[role=status]')).toContain('You are now a member of Acme');
      expect(blocked).toEqual([]);
      // The same link again: a readable page, not an error dump.
      const again = await page.goto(`${base}/invitations/accept?token=${token}`);
      expect(again?.status()).toBe(404);
      expect(await page.textContent('[role=alert]')).toContain('not valid');
    });
    const members = await ctx.http.get('/tenants/self/members').set('BT-API-KEY', tenant.key);
    expect(
      members.body.data.map((m: { user: { email: string; first_name: string } }) => [
        m.user.email,
        m.user.first_name,
      ]),
    ).toContainEqual(['rose@example.com', 'Rose']);
  });
});
