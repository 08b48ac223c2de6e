import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BrowserContext, Page } from 'playwright-core';
import { describeInBrowser, listenLocally, withBrowser } from '../support/browser';
import { TestHttpsServer } from '../support/https-test-server';
import { createProxy, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TestTenant } from '../support/test-app';

const SDK = "require('@basis-theory/basis-theory-reactor-formulas-sdk-js')";

/**
 * The page an attacker serves from the vault's origin: it says it ran (the title), then reads the key
 * /docs may have kept in localStorage and creates a management application with it. One line, single
 * quotes only: it still runs when the vault sends it as a JSON string.
 */
const ATTACK_SCRIPT = [
  "document.title = 'script ran';",
  'let key = null;',
  "try { const stored = JSON.parse(localStorage.getItem('authorized') || '{}');",
  "key = Object.values(stored).map((a) => a.value).find((v) => typeof v === 'string') || null; }",
  "catch (e) { document.title = 'script ran without storage'; }",
  "document.cookie = 'planted=1; path=/';",
  "if (key) { fetch('/applications', { method: 'POST',",
  "headers: { 'BT-API-KEY': key, 'Content-Type': 'application/json' },",
  "body: JSON.stringify({ name: 'backdoor', type: 'management', permissions: ['application:read'] }),",
  "}).then((r) => { document.title = 'backdoor ' + r.status; }); }",
].join(' ');
const ATTACK_HTML = `<!doctype html><html><head><title>Orders</title></head><body><script>${ATTACK_SCRIPT}</script></body></html>`;

/**
 * A destination's own attack page. With `?extra` it adds headers that would act on the vault's origin
 * (not in the browser runs: Clear-Site-Data would wipe the very storage the page tries to read).
 */
function hostileDestination(req: IncomingMessage, res: ServerResponse): void {
  const extra = req.url?.includes('extra') === true;
  res.writeHead(
    200,
    [
      ['Content-Type', 'text/html; charset=utf-8'],
      ['Set-Cookie', 'session=attacker; Path=/'],
      ['Set-Cookie', 'other=attacker; Path=/'],
      ['Access-Control-Allow-Origin', '*'],
      ['Access-Control-Allow-Credentials', 'true'],
      ['Content-Security-Policy', "script-src 'unsafe-inline'"],
      ['X-Partner', 'kept'],
      ...(extra
        ? [
            ['Clear-Site-Data', '"storage"'],
            ['Service-Worker-Allowed', '/'],
            ['Refresh', '5; url=https://attacker.example/'],
            ['Permissions-Policy', 'camera=*'],
            ['Strict-Transport-Security', 'max-age=1'],
          ]
        : []),
    ].flat(),
  );
  res.end(ATTACK_HTML);
}

/** Tenant HTML and script on the vault's origin, in a real browser (issue 19 item 1). */
describeInBrowser('tenant and destination HTML served from the vault origin, in headless Chromium', () => {
  let fx: ProxyFixture;
  let base: string;
  let victim: TestTenant;
  let attacker: TestTenant;
  let destination: TestHttpsServer;

  beforeAll(async () => {
    fx = await proxyFixture();
    base = await listenLocally(fx.ctx);
    victim = await fx.ctx.newTenant('Victim');
    attacker = await fx.ctx.newTenant('Attacker');
    destination = await fx.server(hostileDestination);
  });
  afterAll(() => fx.close());

  /** The victim opens /docs and authorizes with their management key, as the explorer invites. */
  async function authorizeInDocs(page: Page): Promise<void> {
    await page.goto(`${base}/docs`);
    await page.locator('button.authorize').first().click();
    await page.locator('.modal-ux input').first().fill(victim.key);
    await page.locator('.modal-ux button.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();
  }

  async function backdoors(): Promise<string[]> {
    const list = await fx.ctx.http.get('/applications').set('BT-API-KEY', victim.key).expect(200);
    return (list.body.data as { name: string }[]).map((a) => a.name).filter((n) => n === 'backdoor');
  }

  /** Opens the attack page; the script must not have run (title), set a cookie, or created a backdoor. */
  async function visitAttack(browser: BrowserContext, page: Page, proxyKey: string): Promise<void> {
    const res = await page.goto(`${base}/proxy?bt-proxy-key=${proxyKey}`);
    // Give the script the time to finish its call (it renames the page when the answer comes).
    await page
      .waitForFunction("document.title.startsWith('backdoor')", undefined, { timeout: 2000 })
      .catch(() => undefined);
    expect(res?.status()).toBe(200);
    expect(await backdoors()).toEqual([]);
    expect(await page.title()).toBe('Orders');
    expect(await browser.cookies()).toEqual([]);
    expect(res?.headers()['content-security-policy']).toMatch(/^sandbox; default-src 'none'/);
    expect(res?.headers()['x-content-type-options']).toBe('nosniff');
  }

  it("a transform's CustomHttpResponseError page does not run, and /docs kept no key to steal", async () => {
    const { key } = await createProxy(fx.ctx, attacker, {
      destination_url: fx.url(destination),
      require_auth: false,
      request_transform: {
        code: `module.exports = async function () {
          throw new (${SDK}.CustomHttpResponseError)({
            status: 200,
            headers: { 'Content-Type': 'text/html', 'Set-Cookie': 'planted=2; Path=/' },
            body: ${JSON.stringify(ATTACK_HTML)},
          });
        };`,
      },
    });
    await withBrowser(async (browser) => {
      const page = await browser.newPage();
      await authorizeInDocs(page);
      await visitAttack(browser, page, key);
      await page.goto(`${base}/docs`);
      expect(await page.evaluate('JSON.stringify(localStorage)')).not.toContain(victim.key);
    });
  });

  it("a destination's HTML relayed by /proxy does not run even if a key were stored, and its cookies and CORS are dropped", async () => {
    const { key } = await createProxy(fx.ctx, attacker, {
      destination_url: fx.url(destination),
      require_auth: false,
    });
    await withBrowser(async (browser) => {
      const page = await browser.newPage();
      // The worst case: a key in the origin's storage (as /docs kept it before).
      await page.goto(`${base}/docs`);
      const stored = JSON.stringify({ api_key: { value: victim.key } });
      await page.evaluate(`localStorage.setItem('authorized', ${JSON.stringify(stored)})`);
      await visitAttack(browser, page, key);
    });

    const res = await fx.ctx.http.get(`/proxy?bt-proxy-key=${key}&extra=1`);
    expect(res.status).toBe(200);
    expect(res.headers['x-partner']).toBe('kept');
    for (const name of [
      'set-cookie',
      'access-control-allow-origin',
      'access-control-allow-credentials',
      'clear-site-data',
      'service-worker-allowed',
      'refresh',
      'permissions-policy',
      'strict-transport-security',
    ]) {
      expect(res.headers).not.toHaveProperty(name);
    }
  });

  it('/docs still renders under its CSP, and Try it out calls the API with the key entered', async () => {
    await withBrowser(async (browser) => {
      const page = await browser.newPage();
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) {
          violations.push(m.text());
        }
      });
      await authorizeInDocs(page);
      expect(await page.title()).toBe('Token Vault API');
      const operation = page.locator('.opblock', {
        has: page.locator('.opblock-summary-path', { hasText: /^\/applications\/key$/ }),
      });
      await operation.locator('.opblock-summary').click();
      await operation.locator('button.try-out__btn').click();
      await operation.locator('button.execute').click();
      const status = operation.locator('.live-responses-table tbody .response-col_status').first();
      await status.waitFor();
      expect((await status.textContent())?.trim()).toBe('200');
      expect(await operation.locator('.live-responses-table .microlight').first().textContent()).toContain(
        '"type": "management"',
      );
      expect(violations).toEqual([]);
      const docs = await page.request.get(`${base}/docs`);
      expect(docs.headers()['content-security-policy']).toContain("script-src 'self'");
    });
  });
});
