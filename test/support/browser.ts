import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserContext, chromium } from 'playwright-core';
import type { TestContext } from './test-app';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it), driven headless by playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';
/**
 * `describe` for the browser tests. Without Chromium they are skipped with a notice, so a newcomer's
 * `npm test` does not end red for a missing system package; with CI=true (.ci/run) they must run.
 */
export const describeInBrowser: jest.Describe = (() => {
  if (existsSync(CHROMIUM) || process.env.CI === 'true') {
    return describe;
  }
  console.warn(
    `SKIPPED: the browser tests need Chromium at ${CHROMIUM}, which is not installed. ` +
      'Install it (apt-get install chromium) to run them; with CI=true they fail instead.',
  );
  return describe.skip;
})();

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

/** Makes the test app listen on 127.0.0.1 (a free port) and returns its base URL for the browser. */
export async function listenLocally(ctx: TestContext): Promise<string> {
  await ctx.vault.app.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${(ctx.vault.app.getHttpServer().address() as AddressInfo).port}`;
}

/** Runs `use` with a fresh browser profile (its own storage and cookies), closed and deleted afterwards. */
export async function withBrowser<T>(use: (browser: BrowserContext) => Promise<T>): Promise<T> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`,
    );
  }
  const profile = mkdtempSync(join(tmpdir(), 'tv-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
  });
  try {
    return await use(browser);
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
