import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeInBrowser, listenLocally, withBrowser } from '../support/browser';
import { TestApplication, TestContext } from '../support/test-app';
import { rule } from '../support/token-factory';

/** The page a shop would serve: it calls the vault with fetch, from its own origin. */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Reveal</title></head><body>
<script>
  async function call(vault, key, method, path) {
    const res = await fetch(vault + path, { method, headers: { 'BT-API-KEY': key } });
    return { status: res.status, body: await res.json() };
  }
  window.createSession = (vault, key) => call(vault, key, 'POST', '/sessions');
  window.readToken = (vault, key, id) => call(vault, key, 'GET', '/tokens/' + id);
</script>
</body></html>`;

interface Answer {
  status: number;
  body: Record<string, unknown>;
}
type PageWindow = {
  createSession(vault: string, key: string): Promise<Answer>;
  readToken(vault: string, key: string, id: string): Promise<Answer>;
};

describeInBrowser('a session reveals one token to a page on another origin, in headless Chromium', () => {
  let site: Server;
  let origin: string;
  let ctx: TestContext;
  let vault: string;
  let publicApp: TestApplication;
  let backend: TestApplication;
  let token: string;
  let other: string;

  beforeAll(async () => {
    site = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(PAGE);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    // Only the shop's page may call the vault from a browser.
    ctx = await TestContext.create({ env: { CORS_ORIGINS: origin } });
    vault = await listenLocally(ctx);
    const tenant = await ctx.newTenant('Shop');
    publicApp = await ctx.newApplication(tenant, 'public', ['token:create']);
    backend = await ctx.newApplication(
      tenant,
      'private',
      [],
      [rule('/', 'reveal', ['token:create', 'token:read'])],
    );
    const create = (data: unknown) =>
      ctx.http.post('/tokens').set('BT-API-KEY', backend.key).send({ type: 'token', data }).expect(201);
    token = (await create({ secret: 'for the page' })).body.id as string;
    other = (await create({ secret: 'not for the page' })).body.id as string;
  });
  afterAll(async () => {
    await ctx.close();
    await new Promise((resolve) => site.close(resolve));
  });

  it('creates the session with fetch, the backend authorizes one token, the page reads it and is refused another', async () => {
    await withBrowser(async (browser) => {
      const page = await browser.newPage();
      expect((await page.goto(origin))?.status()).toBe(200);
      const created = await page.evaluate(
        ([v, k]) => (globalThis as unknown as PageWindow).createSession(v, k),
        [vault, publicApp.key],
      );
      expect(created.status).toBe(201);
      const { session_key: sessionKey, nonce } = created.body as { session_key: string; nonce: string };
      expect(sessionKey).toMatch(/^key_sess_/);

      await ctx.http
        .post('/sessions/authorize')
        .set('BT-API-KEY', backend.key)
        .send({
          nonce,
          rules: [
            {
              priority: 1,
              transform: 'reveal',
              permissions: ['token:read'],
              conditions: [{ attribute: 'id', operator: 'equals', value: token }],
            },
          ],
        })
        .expect(204);

      const read = (id: string) =>
        page.evaluate(
          ([v, k, t]) => (globalThis as unknown as PageWindow).readToken(v, k, t),
          [vault, sessionKey, id],
        );
      const revealed = await read(token);
      expect(revealed).toMatchObject({ status: 200, body: { id: token, data: { secret: 'for the page' } } });
      const refused = await read(other);
      expect(refused.status).toBe(403);
      expect(JSON.stringify(refused.body)).not.toContain('not for the page');
    });
  });
});
