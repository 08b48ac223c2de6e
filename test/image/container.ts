import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The image scripts/image-build.sh builds. */
export const IMAGE = 'token-vault';
/** The variant with the pkcs11js binding: scripts/image-build.sh --tag token-vault-pkcs11 --build-arg WITH_PKCS11=true. */
export const PKCS11_IMAGE = 'token-vault-pkcs11';

export interface ImageConfig {
  user: string;
  cmd: string[];
  env: string[];
  workingDir: string;
  labels: Record<string, string>;
  healthcheck: string[] | null;
}

export function buildah(...args: string[]): string {
  return execFileSync('buildah', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

export function imageConfig(image = IMAGE): ImageConfig {
  const inspected = JSON.parse(buildah('inspect', '--type', 'image', image)) as {
    Docker: {
      config: {
        User: string;
        Cmd: string[];
        Env: string[];
        WorkingDir: string;
        Labels: Record<string, string>;
        Healthcheck?: { Test: string[] };
      };
    };
  };
  const config = inspected.Docker.config;
  return {
    user: config.User,
    cmd: config.Cmd,
    env: config.Env,
    workingDir: config.WorkingDir,
    labels: config.Labels,
    healthcheck: config.Healthcheck?.Test ?? null,
  };
}

/** A working container of the image, mounted on the host; `remove` unmounts and deletes it. */
export function mountImage(): { root: string; remove: () => void } {
  const name = buildah('from', '--name', `tv-image-${process.pid}-${Date.now()}`, IMAGE);
  const root = buildah('mount', name);
  return {
    root,
    remove: () => {
      buildah('umount', name);
      buildah('rm', name);
    },
  };
}

function parentOf(pid: number): number | null {
  try {
    // The command name in /proc/<pid>/stat is in parentheses and may hold spaces; the ppid follows it.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** A line of /proc/<pid>/status, e.g. `Uid` or `NSpid`. */
export function procStatus(pid: number, field: string): string {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return line?.slice(field.length + 1).trim() ?? '';
}

/** Host pids of the processes below `root` (children, grandchildren, ...). */
export function descendants(root: number): number[] {
  const found: number[] = [];
  const pids = readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number);
  for (const pid of pids) {
    for (let p = parentOf(pid); p !== null && p > 1; p = parentOf(p)) {
      if (p === root) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}

export interface RunningContainer {
  process: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Host pid of the vault's Node process (found below the runtime's process). */
  serverPid: () => number;
  remove: () => void;
}

/**
 * Runs the image's CMD as its USER in a fresh container, on the host network:
 * - `buildah`: `buildah run --isolation chroot` (the runtime CI has; no PID namespace of its own);
 * - `pid1`: the container's root file system in a new PID namespace (`unshare`), so the CMD starts as
 *   PID 1 as under `docker run`, where the kernel delivers a signal only if PID 1 handles it.
 */
export function runImage(
  env: Record<string, string>,
  runtime: 'buildah' | 'pid1',
  options: { image?: string; volumes?: string[]; command?: string[] } = {},
): RunningContainer {
  const image = options.image ?? IMAGE;
  const config = imageConfig(image);
  const name = buildah('from', '--name', `tv-image-${process.pid}-${Date.now()}`, image);
  const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  let child: ChildProcess;
  if (runtime === 'buildah') {
    child = spawn(
      'buildah',
      [
        'run',
        '--isolation',
        'chroot',
        ...envArgs.flatMap((e) => ['--env', e]),
        // host:container[:options] bind mounts (buildah run only).
        ...(options.volumes ?? []).flatMap((v) => ['--volume', v]),
        name,
        '--',
        ...(options.command ?? config.cmd),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } else {
    const root = buildah('mount', name);
    const passwd = readFileSync(join(root, 'etc', 'passwd'), 'utf8');
    const [, , uid, gid] = passwd
      .split('\n')
      .map((l) => l.split(':'))
      .find((f) => f[0] === config.user) ?? ['', '', '', ''];
    child = spawn(
      'unshare',
      [
        '--pid',
        '--fork',
        '--kill-child',
        '--mount',
        '--mount-proc',
        `--root=${root}`,
        `--wd=${config.workingDir}`,
        `--setuid=${uid}`,
        `--setgid=${gid}`,
        '/usr/bin/env',
        '-i',
        ...config.env,
        `HOME=/home/${config.user}`,
        ...envArgs,
        ...config.cmd,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
  }
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const serverPid = (): number => {
    const pid = descendants(child.pid ?? -1).find((p) => commandLine(p) === 'node dist/src/main.js');
    if (pid === undefined) {
      throw new Error(`no vault process below ${child.pid}: ${out.slice(-2000)}`);
    }
    return pid;
  };
  return {
    process: child,
    output: () => out,
    exited,
    serverPid,
    remove: () => {
      if (child.exitCode === null && child.signalCode === null) {
        // A failed test may leave the vault running: stop everything this container started.
        for (const pid of descendants(child.pid ?? -1)) {
          process.kill(pid, 'SIGKILL');
        }
        child.kill('SIGKILL');
      }
      if (runtime === 'pid1') {
        buildah('umount', name);
      }
      buildah('rm', name);
    },
  };
}

/** Waits until the output contains `text`; fails when the container exits first or time runs out. */
export async function waitForOutput(c: RunningContainer, text: string, ms = 60_000): Promise<void> {
  for (const until = Date.now() + ms; Date.now() < until;) {
    if (c.output().includes(text)) {
      return;
    }
    if (c.process.exitCode !== null) {
      throw new Error(`the container exited: ${c.output().slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for "${text}": ${c.output().slice(-3000)}`);
}
