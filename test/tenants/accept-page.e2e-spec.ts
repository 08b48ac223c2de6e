import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { Mailer } from '../../src/tenants/invitations/mailer';
import { CapturingMailer, secretOf } from '../support/mail';
import { TestContext, TestTenant } from '../support/test-app';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

describe('the invitation acceptance page in headless Chromium', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let base: string;
  const mailer = new CapturingMailer();
  let profile: string;

  beforeAll(async () => {
    ctx = await TestContext.create({ overrides: [{ provide: Mailer, useValue: mailer }] });
    await ctx.vault.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.vault.app.getHttpServer().address() as AddressInfo).port}`;
    tenant = await ctx.newTenant('Acme');
    profile = mkdtempSync(join(tmpdir(), 'tv-chromium-'));
  });
  afterAll(async () => {
    await ctx.close();
    rmSync(profile, { recursive: true, force: true });
  });

  it('is filled in and submitted; the member then appears in the API', async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is not installed at ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`,
      );
    }
    await ctx.http
      .post('/tenants/self/invitations')
      .set('BT-API-KEY', tenant.key)
      .send({ email: 'rose@example.com' })
      .expect(201);
    const token = secretOf(mailer.sent[mailer.sent.length - 1].text);
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ARGS,
      headless: true,
    });
    try {
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
    } finally {
      await browser.close();
    }
    const members = await ctx.http.get('/tenants/self/members').set('BT-API-KEY', tenant.key);
    expect(
      members.body.data.map((m: { user: { email: string; first_name: string } }) => [
        m.user.email,
        m.user.first_name,
      ]),
    ).toContainEqual(['rose@example.com', 'Rose']);
  });
});
