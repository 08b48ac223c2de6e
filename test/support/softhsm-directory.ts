import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * One SoftHSM2 token folder for the whole run, made before Jest starts its workers: the PKCS#11 library
 * reads SOFTHSM2_CONF from the process environment, which a test file's `process.env` (a copy) cannot
 * change. Each test file initialises its own token there, under its own label.
 */
export function prepareSoftHsmDirectory(): void {
  const dir = mkdtempSync(join(tmpdir(), 'tv-softhsm-'));
  mkdirSync(join(dir, 'tokens'));
  const conf = join(dir, 'softhsm2.conf');
  writeFileSync(
    conf,
    `directories.tokendir = ${join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`,
  );
  process.env.SOFTHSM2_CONF = conf;
}

export function removeSoftHsmDirectory(): void {
  const conf = process.env.SOFTHSM2_CONF;
  if (conf !== undefined && conf.includes('tv-softhsm-')) {
    rmSync(dirname(conf), { recursive: true, force: true });
  }
}
