'use strict';
/**
 * The vault of the `server: 'pkcs11'` scenarios: its master key is an AES key in a SoftHSM2 token made in a
 * temporary folder (`softhsm2-util` must be installed: apt-get install softhsm2), created with the vault's
 * own generator from the build. Tenant keys are unwrapped by the token once, then cached: the figure shows
 * whether reads stay as fast as with the env provider.
 */
const { execFileSync } = require('node:child_process');
const { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { startServer } = require('./server');

const LIBRARIES = ['/usr/lib/softhsm/libsofthsm2.so', '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so'];

async function startPkcs11Vault(config) {
  const library = LIBRARIES.find((path) => existsSync(path));
  if (library === undefined) {
    throw new Error('SoftHSM2 is not installed: apt-get install softhsm2');
  }
  const dir = mkdtempSync(join(tmpdir(), 'tv-bench-hsm-'));
  mkdirSync(join(dir, 'tokens'));
  const conf = join(dir, 'softhsm2.conf');
  writeFileSync(
    conf,
    `directories.tokendir = ${join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`,
  );
  const pinFile = join(dir, 'pin');
  writeFileSync(pinFile, '2468-1357\n', { mode: 0o600 });
  const hsmEnv = { ...process.env, SOFTHSM2_CONF: conf };
  execFileSync(
    'softhsm2-util',
    ['--init-token', '--free', '--label', 'bench', '--so-pin', '87654321', '--pin', '2468-1357'],
    { env: hsmEnv, stdio: 'pipe' },
  );
  const env = {
    SOFTHSM2_CONF: conf,
    VAULT_KEY_PROVIDER: 'pkcs11',
    VAULT_PKCS11_LIBRARY: library,
    VAULT_PKCS11_TOKEN_LABEL: 'bench',
    VAULT_PKCS11_PIN_FILE: pinFile,
    VAULT_PKCS11_KEY_LABELS: 'bench-hsm-1',
    VAULT_MASTER_KEYS: '',
  };
  // The key, made as an operator would: keys:rotate-master --generate (no tenant key exists yet).
  execFileSync(
    process.execPath,
    [join(__dirname, '..', 'dist', 'src', 'cli.js'), 'keys:rotate-master', '--generate'],
    {
      env: { ...hsmEnv, ...env, DATA_DIR: join(dir, 'cli-data'), LOG_LEVEL: 'error' },
      stdio: 'pipe',
    },
  );
  const vault = await startServer({
    postgresUrl: config.postgresUrl,
    cpuProfileDir: config.cpuProfileDir,
    profileWindows: config.profile !== null,
    env,
  });
  const stop = vault.stop.bind(vault);
  vault.stop = async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  };
  return vault;
}

module.exports = { startPkcs11Vault };
