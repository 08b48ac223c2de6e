import { ESCAPE_CORPUS, LEAK_MARKERS } from '../support/escape-corpus';
import { ReactorKind, reactorRunning, reactorsApi } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

const CANARY = 'tv-canary-6f1d2c9e';

function attemptCode(body: string): string {
  return `module.exports = async function (req) {
    let got = null;
    const result = await (async () => { ${body} })();
    if (result !== undefined) return result;
    return { raw: { escaped: got !== null && got !== undefined, got: got === null || got === undefined ? null : String(typeof got) } };
  };`;
}

describe.each<ReactorKind>(['formula', 'code'])('sandbox escape corpus (through a %s reactor)', (kind) => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let key: string;
  const saved = process.env.TV_ESCAPE_CANARY;

  beforeAll(async () => {
    // A secret in the vault process's environment: no attempt may ever read it.
    process.env.TV_ESCAPE_CANARY = CANARY;
    ctx = await TestContext.create({ env: { SANDBOX_WORKERS: '2', SANDBOX_TIMEOUT_MS: '2000' } });
    tenant = await ctx.newTenant('Acme');
    key = (await tokenApp(ctx, tenant, [], ['token:use'])).key;
  });
  afterAll(async () => {
    process.env.TV_ESCAPE_CANARY = saved;
    await ctx.close();
  });

  it('holds at least 30 attempts', () => {
    expect(ESCAPE_CORPUS.length).toBeGreaterThanOrEqual(30);
  });

  it.each(ESCAPE_CORPUS.map((a) => [a.name, a.body]))('contains: %s', async (_name, body) => {
    const reactorId = await reactorRunning(ctx, tenant, kind, attemptCode(body));
    const res = await reactorsApi(ctx, tenant).react(reactorId, {}, key);
    const text = JSON.stringify(res.body) + JSON.stringify(res.headers);
    for (const marker of LEAK_MARKERS) {
      expect(text).not.toMatch(marker);
    }
    expect(text).not.toContain(CANARY);
    // Either the attempt failed with an error, or it ran and reached nothing.
    if (res.status === 200) {
      expect(res.body.raw?.escaped ?? false).toBe(false);
    } else {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.body.status).toBe(res.status);
    }
    // The vault still serves other requests.
    expect((await ctx.http.get('/health')).status).toBe(200);
  });
});
