import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeInBrowser, listenLocally, withBrowser } from '../support/browser';
import { TestApplication, TestContext } from '../support/test-app';
import { rule } from '../support/token-factory';

/** A merchant's checkout page: it posts the typed card to the vault with fetch and shows the intent id. */
function checkoutPage(vault: string, publicKey: string): string {
  return `<!doctype html>
<html><body>
<form id="pay">
  <label>Card number <input id="number"></label>
  <label>Month <input id="month"></label>
  <label>Year <input id="year"></label>
  <label>CVC <input id="cvc"></label>
  <button>Pay</button>
</form>
<output id="intent"></output><output id="health"></output>
<script>
document.getElementById('pay').addEventListener('submit', async (event) => {
  event.preventDefault();
  const value = (id) => document.getElementById(id).value;
  const res = await fetch(${JSON.stringify(vault)} + '/token-intents', {
    method: 'POST',
    headers: { 'BT-API-KEY': ${JSON.stringify(publicKey)}, 'Content-Type': 'application/json' },
    body: JSON.stringify({ type: 'card', data: {
      number: value('number'), expiration_month: Number(value('month')),
      expiration_year: Number(value('year')), cvc: value('cvc') } }),
  });
  const intent = await res.json();
  document.getElementById('intent').textContent = res.status + ' ' + intent.id + ' ' + res.headers.get('BT-TRACE-ID');
  try {
    await fetch(${JSON.stringify(vault)} + '/health');
    document.getElementById('health').textContent = 'readable';
  } catch {
    document.getElementById('health').textContent = 'blocked';
  }
});
</script>
</body></html>`;
}

describeInBrowser('a checkout page on another origin, in headless Chromium', () => {
  const world: {
    ctx?: TestContext;
    vault?: string;
    shop?: Server;
    page?: TestApplication;
    backend?: TestApplication;
  } = {};
  const ctx = (): TestContext => world.ctx as TestContext;

  beforeAll(async () => {
    world.ctx = await TestContext.create();
    world.vault = await listenLocally(ctx());
    const tenant = await ctx().newTenant('Shop');
    world.page = await ctx().newApplication(tenant, 'public', ['token-intent:create']);
    world.backend = await ctx().newApplication(
      tenant,
      'private',
      [],
      [rule('/', 'reveal', ['token:create', 'token:read'])],
    );
    const html = checkoutPage(world.vault, world.page.key);
    world.shop = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(html);
    });
    await new Promise<void>((done) => world.shop?.listen(0, '127.0.0.1', done));
  });
  afterAll(async () => {
    await new Promise((done) => world.shop?.close(done));
    await ctx().close();
  });

  it('creates a token intent with a public key by fetch; the backend converts it into the typed card', async () => {
    const shop = `http://127.0.0.1:${(world.shop?.address() as AddressInfo).port}/checkout`;
    const shown = await withBrowser(async (browser) => {
      const page = await browser.newPage();
      await page.goto(shop);
      await page.getByLabel('Card number').fill('4111111111111111');
      await page.getByLabel('Month').fill('11');
      await page.getByLabel('Year').fill('2032');
      await page.getByLabel('CVC').fill('987');
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.waitForFunction("document.getElementById('health').textContent !== ''");
      return {
        intent: (await page.textContent('#intent')) as string,
        health: await page.textContent('#health'),
      };
    });
    const [status, intentId, traceId] = shown.intent.split(' ');
    // The page read the answer and an exposed header: the preflight and the answer's CORS headers passed.
    expect([status, traceId]).toEqual(['201', expect.stringMatching(/\S/) as string]);
    // The vault's operator endpoints stay unreadable from other origins.
    expect(shown.health).toBe('blocked');
    const backend = (world.backend as TestApplication).key;
    const token = await ctx()
      .http.post('/tokens')
      .set('BT-API-KEY', backend)
      .send({ token_intent_id: intentId });
    expect(token.status).toBe(201);
    const read = await ctx().http.get(`/tokens/${token.body.id}`).set('BT-API-KEY', backend);
    expect(read.body.data).toEqual({
      number: '4111111111111111',
      expiration_month: 11,
      expiration_year: 2032,
      cvc: '987',
    });
  });
});
