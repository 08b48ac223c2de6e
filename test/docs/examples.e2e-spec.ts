import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { postgresUrl } from '../support/databases';
import { seedEmbedded } from '../support/fresh-store';
import { TestHttpsServer } from '../support/https-test-server';
import { TEST_HOST } from '../support/outbound';
import { ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TEST_MASTER_KEYS } from '../support/test-app';
import {
  Document,
  DOCUMENTS,
  fenceOf,
  readDocument,
  shellBlocks,
  UNTESTED,
  WALKTHROUGHS,
} from './shell-blocks';
import { blocksOf, run, scriptOf } from './walkthroughs';

const ROOT = join(__dirname, '../..');
const METRICS_TOKEN = randomBytes(32).toString('hex');

/** The destination the guides call: answers with what it received, as an echo service's /anything does. */
function echoAnything(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const text = body.toString('utf8');
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: reported as null
  }
  const url = new URL(req.url ?? '/', `https://${TEST_HOST}`);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      args: Object.fromEntries(url.searchParams),
      data: text,
      headers: req.headers,
      json,
      method: req.method,
      url: url.href,
    }),
  );
}

describe('the shell examples of the README and the guides', () => {
  it.each(DOCUMENTS)('%s: every block is run, or listed as untested with a reason', (document) => {
    const blocks = shellBlocks(readDocument(document));
    const allowed = UNTESTED[document];
    for (const block of blocks) {
      // Throws on an attribute it does not know.
      const fence = fenceOf(block);
      expect({ line: block.line, language: block.language }).toEqual({ line: block.line, language: 'sh' });
      if (fence.walkthrough !== null) {
        expect({ line: block.line, walkthrough: WALKTHROUGHS[fence.walkthrough]?.document }).toEqual({
          line: block.line,
          walkthrough: document,
        });
      }
      if (fence.noTest) {
        const entries = allowed.filter((a) => block.body.startsWith(a.starts));
        expect({ line: block.line, listed: entries.length }).toEqual({ line: block.line, listed: 1 });
      }
    }
    for (const [name, walkthrough] of Object.entries(WALKTHROUGHS)) {
      if (walkthrough.document === document) {
        const own = blocks.filter((b) => fenceOf(b).walkthrough === name).length;
        expect({ walkthrough: name, hasBlocks: own > 0 }).toEqual({ walkthrough: name, hasBlocks: true });
      }
    }
    const untested = blocks.filter((b) => fenceOf(b).noTest);
    for (const entry of allowed) {
      expect({
        entry: entry.starts,
        matches: untested.filter((b) => b.body.startsWith(entry.starts)).length,
      }).toEqual({
        entry: entry.starts,
        matches: 1,
      });
    }
  });

  describe('run in order against a vault', () => {
    let fx: ProxyFixture;
    let echo: TestHttpsServer;
    let vault: string;
    let work: string;

    beforeAll(async () => {
      fx = await proxyFixture({ env: { METRICS_TOKEN } });
      echo = await fx.server(echoAnything);
      await fx.ctx.vault.app.listen(0, '127.0.0.1');
      vault = `http://127.0.0.1:${(fx.ctx.vault.app.getHttpServer().address() as AddressInfo).port}`;
    });
    afterAll(() => fx.close());
    beforeEach(() => {
      // A scratch folder inside the project (git ignores it), as a reader runs the examples in the project's
      // folder: `npx token-vault` finds the project's own bin from there.
      mkdirSync(join(ROOT, '.doc-examples'), { recursive: true });
      work = mkdtempSync(join(ROOT, '.doc-examples', 'run-'));
    });
    afterEach(() => rmSync(work, { recursive: true, force: true }));

    async function runDocument(
      document: Document,
      settings: Record<string, string>,
      env: Record<string, string> = {},
    ): Promise<string> {
      const script = scriptOf(blocksOf(document, null, postgresUrl() !== null), settings);
      const { code, output } = await run(script, work, env);
      if (code !== 0) {
        throw new Error(`the shell blocks of ${document} failed (exit ${code}):\n${output.slice(-4000)}`);
      }
      return output;
    }

    it('README.md: the first session stores a card and reads it back masked', async () => {
      const { key } = await fx.ctx.newTenant('Readme');
      const output = await runDocument('README.md', { VAULT: vault, MANAGEMENT_KEY: key });
      expect(output).toMatch(/"number":"X{12}4242"/);
    });

    it('docs/guide.md: every capability, the proxy and webhook examples calling the local echo', async () => {
      const { key } = await fx.ctx.newTenant('Guide');
      const before = echo.requests;
      const output = await runDocument('docs/guide.md', {
        VAULT: vault,
        MANAGEMENT_KEY: key,
        DESTINATION: `https://${TEST_HOST}:${echo.port}`,
      });
      // After the access rules, the card reads in clear; the reactor answers with the last four.
      expect(output).toContain('"number":"4242424242424242"');
      expect(output).toContain('{"tokens":null,"raw":{"last4":"4242","currency":"USD"}}');
      // The proxy calls: the number in clear at the destination, the caller's Authorization passed on, the
      // configured proxy's transform adding its configuration.
      expect(output).toContain('"json":{"number":"4242424242424242","amount":1000}');
      expect(output).toContain('"authorization":"Bearer processor-key"');
      expect(output).toMatch(/"json":\{"card":\{[^}]*"number":"4242424242424242"[^}]*\},"currency":"USD"\}/);
      expect(echo.requests - before).toBeGreaterThanOrEqual(2);
    });

    it('docs/operations.md: the operator commands print parseable output, and /metrics answers the token', async () => {
      const { key } = await fx.ctx.newTenant('Operations');
      // Operator commands take the vault's settings from the environment. On PostgreSQL they share the test
      // vault's database, as beside a running server; the embedded database belongs to one process, so there
      // they run on a data folder of their own, as on a stopped server's.
      const url = postgresUrl() === null ? null : (fx.ctx.database.options as { url: string }).url;
      if (url === null) {
        // A stopped server's folder holds a migrated database: the commands do not migrate one from nothing.
        seedEmbedded(join(work, 'data'));
      }
      const env: Record<string, string> =
        url === null
          ? { DATA_DIR: join(work, 'data'), LOG_LEVEL: 'warn' }
          : { DATABASE_URL: url, VAULT_MASTER_KEYS: TEST_MASTER_KEYS, LOG_LEVEL: 'warn' };
      // Never the registry: a bin that is not found fails instead of being looked up and installed.
      env.npm_config_offline = 'true';
      env.npm_config_yes = 'false';
      const output = await runDocument(
        'docs/operations.md',
        { VAULT: vault, MANAGEMENT_KEY: key, METRICS_TOKEN },
        env,
      );
      expect(output).toMatch(/token_vault_http_request_duration_seconds_count\{/);
      // `npx token-vault tenant:create --json` wrote JSON and nothing else.
      const acme = JSON.parse(readFileSync(join(work, 'acme.json'), 'utf8')) as Record<string, unknown>;
      expect(acme).toEqual({
        tenant_id: expect.any(String),
        name: 'Acme',
        application_id: expect.any(String),
        key: expect.stringMatching(/^key_/),
      });
      // `npx token-vault audit:export > audit.jsonl` wrote JSON Lines and nothing else. On PostgreSQL they hold
      // the test vault's records (the other documents' sessions) and end in the tenants' checkpoints.
      const exported = readFileSync(join(work, 'audit.jsonl'), 'utf8');
      const parsed = exported
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      if (url !== null) {
        expect(parsed.filter((l) => 'checkpoint' in l).length).toBeGreaterThanOrEqual(1);
      }
    }, 300_000);
  });
});
