import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TestHttpsServer } from '../support/https-test-server';
import { ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TestContext } from '../support/test-app';

/** The README's proxy destination, served on 127.0.0.1 by a stand-in that answers as httpbin's /anything does. */
const HTTPBIN = 'httpbin.org';

function httpbinAnything(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const text = body.toString('utf8');
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: httpbin reports json: null
  }
  const url = new URL(req.url ?? '/', `https://${HTTPBIN}`);
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

/** The fenced sh blocks of the README from "A first session" up to "Configuration": the session a new user runs. */
function sessionScript(readme: string): string {
  const start = readme.indexOf('## A first session');
  const end = readme.indexOf('## Configuration');
  const blocks = [...readme.slice(start, end).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  return blocks.join('\n');
}

function run(script: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', script],
      // The project's Node first on PATH, as under npm scripts.
      {
        env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
        timeout: 60_000,
        maxBuffer: 8 << 20,
      },
      (err, stdout, stderr) =>
        resolve({
          code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1,
          output: stdout + stderr,
        }),
    );
  });
}

describe("the README's shell session", () => {
  let fx: ProxyFixture;
  let ctx: TestContext;
  let httpbin: TestHttpsServer;
  let base: string;
  let key: string;

  beforeAll(async () => {
    fx = await proxyFixture({ names: { [HTTPBIN]: '127.0.0.1' } });
    ctx = fx.ctx;
    httpbin = await fx.server(httpbinAnything, [HTTPBIN]);
    await ctx.vault.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.vault.app.getHttpServer().address() as AddressInfo).port}`;
    key = (await ctx.newTenant('Default')).key;
  });
  afterAll(() => fx.close());

  it('runs as written against a started server, every call succeeding', async () => {
    const readme = readFileSync(join(__dirname, '../../README.md'), 'utf8');
    const session = sessionScript(readme);
    expect(session).toContain('KEY=key_...');
    expect(session).toContain('BASE=http://localhost:3000');
    const script = [
      'set -euo pipefail',
      // Any HTTP error fails the session (and shows its body).
      'curl() { command curl --fail-with-body "$@"; }',
      session
        .replace('KEY=key_...', `KEY=${key}`)
        .replace('BASE=http://localhost:3000', `BASE=${base}`)
        .replaceAll(`https://${HTTPBIN}`, `https://${HTTPBIN}:${httpbin.port}`),
    ].join('\n');
    const { code, output } = await run(script);
    if (code !== 0) {
      throw new Error(`the README session failed (exit ${code}):\n${output.slice(-3000)}`);
    }
    // After the access rules, the card reads in clear; the reactor answers with the last four.
    expect(output).toContain('"number":"4242424242424242"');
    expect(output).toContain('{"tokens":null,"raw":{"last4":"4242","currency":"USD"}}');
    // The proxy calls: the number in clear at the destination, the caller's Authorization passed on, the
    // configured proxy's transform adding its configuration.
    expect(output).toContain('"json":{"number":"4242424242424242","amount":1000}');
    expect(output).toContain('"authorization":"Bearer processor-key"');
    expect(output).toMatch(/"json":\{"card":\{[^}]*"number":"4242424242424242"[^}]*\},"currency":"USD"\}/);
    expect(httpbin.requests).toBe(2);
  });
});
