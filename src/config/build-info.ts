import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What this process runs: package.json's version, the commit the image was built from, the Node.js. */
export interface BuildInfo {
  version: string;
  /** VAULT_BUILD_COMMIT (set by the image build); null when not given. */
  commit: string | null;
  node: string;
}

/** A commit or build id fit for a metric label: no spaces, quotes or anything long. */
const COMMIT = /^[0-9A-Za-z._-]{1,64}$/;

let cachedVersion: string | undefined;

/**
 * The version in the vault's own package.json, found by walking up from this file: it sits at a different
 * depth in src/ (tests) and dist/src/ (the build, the image).
 */
export function packageVersion(from: string = __dirname): string {
  if (from === __dirname && cachedVersion !== undefined) {
    return cachedVersion;
  }
  for (let dir = from; ; dir = dirname(dir)) {
    let text: string | null = null;
    try {
      text = readFileSync(join(dir, 'package.json'), 'utf8');
    } catch {
      // Not here: one folder up.
    }
    if (text !== null) {
      const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
      if (pkg.name === 'token-vault' && typeof pkg.version === 'string') {
        if (from === __dirname) {
          cachedVersion = pkg.version;
        }
        return pkg.version;
      }
    }
    if (dirname(dir) === dir) {
      throw new Error(`no package.json of token-vault above ${from}`);
    }
  }
}

/** The build facts; a commit that could not be a label value is refused (the caller names the variable). */
export function buildInfo(commit: string | undefined): BuildInfo {
  if (commit !== undefined && !COMMIT.test(commit)) {
    throw new Error('must be a commit id or build id: up to 64 letters, digits, dots, dashes, underscores');
  }
  return { version: packageVersion(), commit: commit ?? null, node: process.version };
}
