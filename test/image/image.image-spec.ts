import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../support/spawned-server';
import {
  commandLine,
  ImageConfig,
  IMAGE,
  imageConfig,
  mountImage,
  procStatus,
  RunningContainer,
  runImage,
  waitForOutput,
} from './container';

/** `docker stop` waits 10 s before SIGKILL; the vault must be gone well within it. */
const SHUTDOWN_GRACE_MS = 10_000;
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030 };
/** Dev dependencies (package.json) that must not reach the image, playwright-core among them. */
const DEV_ONLY = ['jest', 'typescript', 'playwright-core', '@swc/core', 'eslint', 'supertest', 'prettier'];

function api(base: string, key: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'BT-API-KEY': key, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
}

/** Every file under `dir` whose name matches, with the path below `dir`. */
function findFiles(dir: string, match: RegExp, below = ''): string[] {
  return readdirSync(join(dir, below), { withFileTypes: true }).flatMap((e) => {
    const path = join(below, e.name);
    if (e.isDirectory()) {
      return findFiles(dir, match, path);
    }
    return match.test(e.name) ? [path] : [];
  });
}

/** A fresh database on the test PostgreSQL; returns its URL. */
async function createDatabase(name: string): Promise<string> {
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(name: string): Promise<void> {
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

const newDatabaseName = (): string => `tv_image_${randomBytes(6).toString('hex')}`;

/** Waits for the container to exit, at most `ms`; null when it is still running then. */
async function exitWithin(c: RunningContainer, ms: number) {
  const timeout = new Promise<null>((r) => setTimeout(() => r(null), ms).unref());
  return Promise.race([c.exited, timeout]);
}

let config: ImageConfig;
beforeAll(() => {
  config = imageConfig();
  // An image left from another commit would test old code: the build script labels each build.
  const head = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  if (config.labels['org.opencontainers.image.revision'] !== head) {
    throw new Error(`the ${IMAGE} image was not built from HEAD ${head}: run scripts/image-build.sh`);
  }
});

describe('the token-vault image', () => {
  it('runs as the unprivileged node user, with a HEALTHCHECK on /health/live', () => {
    expect(config.user).toBe('node');
    expect(config.workingDir).toBe('/app');
    expect(config.env).toContain('NODE_ENV=production');
    expect(config.healthcheck?.join(' ')).toContain('/health/live');
  });

  it('holds the built service and its production dependencies only: no dev tools, tests, .git or keys', () => {
    const image = mountImage();
    try {
      const app = join(image.root, 'app');
      expect(readdirSync(app).sort()).toEqual(['data', 'dist', 'node_modules', 'package.json']);
      expect(readdirSync(join(app, 'data'))).toEqual([]);
      expect(readdirSync(join(app, 'dist')).sort()).toEqual(['ormconfig.js', 'ormconfig.js.map', 'src']);
      expect(existsSync(join(app, 'dist', 'src', 'main.js'))).toBe(true);
      expect(findFiles(join(app, 'dist'), /\.spec\.js$/)).toEqual([]);
      for (const name of DEV_ONLY) {
        expect([name, existsSync(join(app, 'node_modules', name))]).toEqual([name, false]);
      }
      expect(existsSync(join(image.root, '.git'))).toBe(false);
      expect(findFiles(app, /^\.git$|\.key$|^master\.key$|\.env$/)).toEqual([]);
      // The Node of the base image runs the service, not a second copy from the `node` package.
      expect(existsSync(join(app, 'node_modules', 'node'))).toBe(false);
    } finally {
      image.remove();
    }
  });
});

describe.each([
  ['the embedded database', false],
  ['PostgreSQL', true],
])('the image booted with buildah run on %s', (_name, postgres) => {
  let container: RunningContainer;
  let base: string;
  let managementKey: string;
  let database: string | null = null;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = {
      PORT: String(port),
      HOST: '127.0.0.1',
      VAULT_MASTER_KEYS: `image-1:${randomBytes(32).toString('base64')}`,
    };
    if (postgres) {
      database = newDatabaseName();
      env.DATABASE_URL = await createDatabase(database);
    }
    container = runImage(env, 'buildah');
    await waitForOutput(container, 'Stop with Ctrl+C');
    managementKey =
      /Management key of the default tenant[^\n]*\n\s*(key_\w+)/.exec(container.output())?.[1] ?? '';
    expect(managementKey).toMatch(/^key_/);
  });

  afterAll(async () => {
    container?.remove();
    if (database !== null) {
      await dropDatabase(database);
    }
  });

  it('runs node itself as the node user: the CMD execs it, no shell is left between', () => {
    const pid = container.serverPid();
    expect(procStatus(pid, 'Uid').split(/\s+/)).toEqual(['1000', '1000', '1000', '1000']);
    const parent = Number(procStatus(pid, 'PPid'));
    expect(commandLine(parent)).not.toMatch(/^(\/bin\/)?sh /);
  });

  it('answers /health and /health/ready', async () => {
    expect((await fetch(`${base}/health`)).status).toBe(200);
    const ready = await fetch(`${base}/health/ready`);
    expect([ready.status, await ready.json()]).toEqual([200, expect.objectContaining({ status: 'ok' })]);
  });

  it('round-trips a card token and runs a reactor (isolated-vm loads in the image)', async () => {
    const management = api(base, managementKey);
    const perms = ['token:create', 'token:read', 'token:use'];
    const app = await management('POST', '/applications', {
      name: 'Image test',
      type: 'private',
      permissions: perms,
      rules: [{ description: 'all', priority: 1, container: '/', transform: 'reveal', permissions: perms }],
    });
    expect(app.status).toBe(201);
    const backend = api(base, app.body.key as string);
    const created = await backend('POST', '/tokens', { type: 'card', data: CARD });
    expect(created.status).toBe(201);
    const read = await backend('GET', `/tokens/${created.body.id as string}`);
    expect([read.status, read.body.data, read.headers.get('cache-control')]).toEqual([200, CARD, 'no-store']);

    const formula = await management('POST', '/reactor-formulas', {
      name: 'Last four',
      type: 'private',
      code: 'module.exports = async function (req) { return { raw: { last4: req.args.card.number.slice(-4) } }; };',
      configuration: [],
      request_parameters: [{ name: 'card.number', type: 'string' }],
    });
    expect([formula.status, formula.body]).toEqual([
      201,
      expect.objectContaining({ id: expect.any(String) }),
    ]);
    const reactor = await management('POST', '/reactors', {
      name: 'Last four',
      formula: { id: formula.body.id },
      configuration: {},
    });
    expect([reactor.status, reactor.body]).toEqual([
      201,
      expect.objectContaining({ id: expect.any(String) }),
    ]);
    const reacted = await backend('POST', `/reactors/${reactor.body.id as string}/react`, {
      args: { card: `{{ ${created.body.id as string} }}` },
    });
    expect([reacted.status, reacted.body.raw]).toEqual([200, { last4: '4242' }]);
  });

  it('exits 0 on SIGTERM within the shutdown grace, logging the start and the end', async () => {
    process.kill(container.serverPid(), 'SIGTERM');
    expect(await exitWithin(container, SHUTDOWN_GRACE_MS)).toEqual({ code: 0, signal: null });
    expect(container.output()).toMatch(/SIGTERM received: shutting down[\s\S]*Shut down in \d+ ms/);
  });
});

// On PostgreSQL: it boots in a second or two, where the embedded database takes longer.
describe('the image as PID 1 in a PID namespace of its own (as docker run starts it)', () => {
  let container: RunningContainer;
  const database = newDatabaseName();
  afterAll(async () => {
    container?.remove();
    await dropDatabase(database);
  });

  it('serves, and stops on SIGTERM (Node handles it; the kernel ignores unhandled signals to PID 1)', async () => {
    const port = await freePort();
    container = runImage(
      {
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: await createDatabase(database),
        VAULT_MASTER_KEYS: `image-1:${randomBytes(32).toString('base64')}`,
      },
      'pid1',
    );
    await waitForOutput(container, 'Stop with Ctrl+C');
    const pid = container.serverPid();
    // NSpid: the pid on the host, then in the container's namespace.
    expect(procStatus(pid, 'NSpid').split(/\s+/)[1]).toBe('1');
    expect(procStatus(pid, 'Uid').split(/\s+/)[0]).toBe('1000');
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    process.kill(pid, 'SIGTERM');
    expect(await exitWithin(container, SHUTDOWN_GRACE_MS)).toEqual({ code: 0, signal: null });
  });
});
