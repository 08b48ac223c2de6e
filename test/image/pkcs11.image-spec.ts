import { execFileSync } from 'node:child_process';
import { realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Pkcs11KeyProvider } from '../../src/crypto/pkcs11-key-provider';
import { SOFTHSM_LIBRARY } from '../support/softhsm';
import { freePort } from '../support/spawned-server';
import { IMAGE, imageConfig, PKCS11_IMAGE, RunningContainer, runImage, waitForOutput } from './container';

/**
 * The variant built with --build-arg WITH_PKCS11=true carries the pkcs11js binding: it boots with its
 * master key in a SoftHSM2 token (made on the host, bind-mounted with the SoftHSM library), where the
 * plain image refuses the same settings saying what is missing.
 */
const KEY_LABEL = 'image-master-1';
const PIN = '2468-1357';

describe('the PKCS#11 variant of the image', () => {
  let dir: string;
  let env: Record<string, string>;
  let volumes: string[];
  let container: RunningContainer | undefined;

  beforeAll(async () => {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    if (imageConfig(PKCS11_IMAGE).labels['org.opencontainers.image.revision'] !== head) {
      throw new Error(
        `the ${PKCS11_IMAGE} image was not built from HEAD ${head}: run scripts/image-build.sh ` +
          `--tag ${PKCS11_IMAGE} --build-arg WITH_PKCS11=true`,
      );
    }
    if (SOFTHSM_LIBRARY === undefined) {
      throw new Error('SoftHSM2 is not installed (apt-get install softhsm2; .ci/run installs it)');
    }
    // The run's token folder (global-setup.ts): the library reads SOFTHSM2_CONF from the real environment.
    const conf = process.env.SOFTHSM2_CONF;
    if (conf === undefined) {
      throw new Error('SOFTHSM2_CONF is not set: run through test/image/jest.config.js (npm run test:image)');
    }
    dir = dirname(conf);
    const pinFile = join(dir, 'pin');
    writeFileSync(pinFile, `${PIN}\n`, { mode: 0o600 });
    execFileSync(
      'softhsm2-util',
      ['--init-token', '--free', '--label', 'image', '--so-pin', '87654321', '--pin', PIN],
      {
        stdio: 'pipe',
      },
    );
    const config = { library: SOFTHSM_LIBRARY, tokenLabel: 'image', pinFile, keyLabels: [KEY_LABEL] };
    const provider = new Pkcs11KeyProvider(config);
    try {
      provider.generateKey(KEY_LABEL, new Date('2026-01-01T00:00:00Z'));
    } finally {
      provider.close();
    }
    // The image's node user (uid 1000) reads the token and the PIN file.
    execFileSync('chown', ['-R', '1000:1000', dir]);
    env = {
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      SOFTHSM2_CONF: conf,
      VAULT_KEY_PROVIDER: 'pkcs11',
      VAULT_PKCS11_LIBRARY: SOFTHSM_LIBRARY,
      VAULT_PKCS11_TOKEN_LABEL: 'image',
      VAULT_PKCS11_PIN_FILE: pinFile,
      VAULT_PKCS11_KEY_LABELS: KEY_LABEL,
    };
    // Debian's /usr/lib/softhsm/libsofthsm2.so is a symbolic link: mount the folder of the file itself.
    const library = realpathSync(SOFTHSM_LIBRARY);
    env.VAULT_PKCS11_LIBRARY = library;
    volumes = [`${dir}:${dir}`, `${dirname(library)}:${dirname(library)}:ro`];
  });

  afterEach(() => {
    container?.remove();
    container = undefined;
  });

  it('loads the pkcs11js binding', async () => {
    container = runImage({}, 'buildah', {
      image: PKCS11_IMAGE,
      command: ['node', '-e', "require('pkcs11js'); console.log('pkcs11js loaded')"],
    });
    expect(await container.exited).toEqual({ code: 0, signal: null });
    expect(container.output()).toContain('pkcs11js loaded');
  });

  it('boots with its master key in the HSM and reports ready', async () => {
    container = runImage(env, 'buildah', { image: PKCS11_IMAGE, volumes });
    await waitForOutput(container, 'Stop with Ctrl+C', 120_000);
    const ready = await fetch(`http://127.0.0.1:${env.PORT}/health/ready`);
    expect([ready.status, ((await ready.json()) as { checks: Record<string, string> }).checks.keys]).toEqual([
      200,
      'ok',
    ]);
    expect(container.output()).not.toContain(PIN);
  });

  it('the plain image refuses the same settings and says what is missing', async () => {
    container = runImage(env, 'buildah', { image: IMAGE, volumes });
    const exited = await container.exited;
    expect(exited.code).not.toBe(0);
    expect(container.output()).toContain('the pkcs11js native binding is not in this installation');
    expect(container.output()).toContain('--build-arg WITH_PKCS11=true');
  });
});
