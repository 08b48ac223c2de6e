import { ChildProcess, spawn, SpawnOptions } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { binDir, serverUser } from './disposable-postgres';
import { freePort } from './spawned-server';

/** Debian's packages (etcd-server, patroni, haproxy; .ci/run installs them). */
const BINARIES = { etcd: '/usr/bin/etcd', patroni: '/usr/bin/patroni', haproxy: '/usr/sbin/haproxy' };

/** The binaries of the HA topology that are not installed. */
export function haBinariesMissing(): string[] {
  const missing = Object.entries(BINARIES)
    .filter(([, path]) => !existsSync(path))
    .map(([name]) => name);
  try {
    binDir();
  } catch {
    missing.push('postgresql');
  }
  return missing;
}

/**
 * Patroni's timing: a leader whose key is not renewed for `ttl` seconds loses it, and the synchronous
 * standby takes over (loop_wait + 2 * retry_timeout <= ttl, as Patroni requires).
 */
export const PATRONI_TTL_S = 10;
/** HAProxy asks each node's Patroni every CHECK_INTER_MS and marks it down after CHECK_FALL failures. */
export const CHECK_INTER_MS = 500;
const CHECK_FALL = 2;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Node {
  name: string;
  pgPort: number;
  restPort: number;
  patroni?: ChildProcess;
}

/** The last output of a child process, kept for the failure message of a test. */
function capture(child: ChildProcess, into: { text: string }): void {
  const keep = (d: Buffer): void => void (into.text = (into.text + d.toString()).slice(-20_000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
}

/**
 * The HA topology Patroni documents, all on 127.0.0.1 with free ports in a temp folder: one etcd, two
 * PostgreSQL servers run by Patroni with synchronous replication and pg_rewind, and HAProxy sending
 * connections to whichever node's Patroni answers 200 on GET /primary. A test kills a node (its Patroni and
 * its PostgreSQL, as a dying machine does) and starts it again, when it rejoins as a replica.
 */
export class PatroniCluster {
  private readonly children: ChildProcess[] = [];
  private readonly output = { text: '' };
  private owner: { uid: number; gid: number } | undefined;

  private constructor(
    private readonly dir: string,
    private readonly etcdPort: number,
    private readonly proxyPort: number,
    readonly nodes: Node[],
  ) {}

  static async start(): Promise<PatroniCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'tv-patroni-'));
    const nodes: Node[] = [];
    for (const name of ['node1', 'node2']) {
      nodes.push({ name, pgPort: await freePort(), restPort: await freePort() });
    }
    const cluster = new PatroniCluster(dir, await freePort(), await freePort(), nodes);
    try {
      // PostgreSQL refuses to run as root: as root, Patroni (and the servers it starts) run as `postgres`.
      cluster.owner = process.getuid?.() === 0 ? await serverUser() : undefined;
      cluster.own(dir);
      await cluster.startEtcd();
      nodes.forEach((node) => cluster.writeNodeConfig(node));
      cluster.startHaproxy();
      for (const node of nodes) {
        cluster.startNode(node.name);
      }
      await cluster.waitUntilReplicated(90_000);
      return cluster;
    } catch (err) {
      await cluster.destroy();
      throw err;
    }
  }

  /** The database `postgres` through HAProxy: always the current leader, as the vault connects. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.proxyPort}/postgres`;
  }

  /** The node whose Patroni holds the leader lock and runs a primary. */
  async leader(): Promise<string> {
    for (const node of this.nodes) {
      if ((await this.rest(node, '/primary')) === 200) {
        return node.name;
      }
    }
    throw new Error(`no leader: ${this.logs()}`);
  }

  other(name: string): string {
    return this.nodes.find((node) => node.name !== name)!.name;
  }

  /** SIGKILL of the node's Patroni and of its PostgreSQL (killing only PostgreSQL makes Patroni restart it). */
  killNode(name: string): void {
    const node = this.node(name);
    node.patroni?.kill('SIGKILL');
    node.patroni = undefined;
    const pidFile = join(this.dir, node.name, 'postmaster.pid');
    if (existsSync(pidFile)) {
      try {
        process.kill(Number(readFileSync(pidFile, 'utf8').split('\n')[0]), 'SIGKILL');
      } catch {
        // Not running.
      }
    }
  }

  /** Starts the node's Patroni: the first time it bootstraps or clones, later it rewinds and follows. */
  startNode(name: string): void {
    const node = this.node(name);
    node.patroni = this.spawn(BINARIES.patroni, [join(this.dir, `${node.name}.yml`)], true);
  }

  /** Waits until `name` answers 200 on its Patroni path (`/primary`, `/sync`), returning the time taken. */
  async waitFor(name: string, path: '/primary' | '/sync', ms: number): Promise<number> {
    const since = Date.now();
    while ((await this.rest(this.node(name), path)) !== 200) {
      if (Date.now() - since > ms) {
        throw new Error(`${name} not ${path} after ${ms} ms: ${this.logs()}`);
      }
      await sleep(200);
    }
    return Date.now() - since;
  }

  /** What etcd, Patroni and HAProxy said last, for a failure message. */
  logs(): string {
    return this.output.text.slice(-6000);
  }

  /** Kills every process of the topology and deletes its files (even after a failed start). */
  async destroy(): Promise<void> {
    for (const node of this.nodes) {
      this.killNode(node.name);
    }
    for (const child of this.children) {
      child.kill('SIGKILL');
    }
    await Promise.all(
      this.children
        .filter((child) => child.exitCode === null && child.signalCode === null)
        .map((child) => new Promise((resolve) => child.once('exit', resolve))),
    );
    // The servers' backends end once they notice their postmaster is gone.
    await sleep(500);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private node(name: string): Node {
    const node = this.nodes.find((n) => n.name === name);
    if (node === undefined) {
      throw new Error(`no node ${name}`);
    }
    return node;
  }

  private own(path: string): void {
    if (this.owner !== undefined) {
      chownSync(path, this.owner.uid, this.owner.gid);
    }
  }

  private spawn(command: string, args: string[], asServerUser: boolean): ChildProcess {
    const options: SpawnOptions = {
      cwd: this.dir,
      env: { PATH: process.env.PATH ?? '', HOME: this.dir, LANG: 'C.UTF-8' },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(asServerUser && this.owner !== undefined ? this.owner : {}),
    };
    const child = spawn(command, args, options);
    capture(child, this.output);
    this.children.push(child);
    return child;
  }

  private async startEtcd(): Promise<void> {
    const peer = `http://127.0.0.1:${await freePort()}`;
    const client = `http://127.0.0.1:${this.etcdPort}`;
    this.spawn(
      BINARIES.etcd,
      [
        '--name=etcd1',
        `--data-dir=${join(this.dir, 'etcd')}`,
        `--listen-client-urls=${client}`,
        `--advertise-client-urls=${client}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=etcd1=${peer}`,
      ],
      false,
    );
    for (const since = Date.now(); ; await sleep(100)) {
      const health = await fetch(`${client}/health`, { signal: AbortSignal.timeout(1000) }).catch(() => null);
      if (health?.ok === true) {
        return;
      }
      if (Date.now() - since > 20_000) {
        throw new Error(`etcd did not start: ${this.logs()}`);
      }
    }
  }

  /** Patroni's configuration of one node (README: "High availability" shows the same settings). */
  private writeNodeConfig(node: Node): void {
    const file = join(this.dir, `${node.name}.yml`);
    writeFileSync(
      file,
      [
        'scope: token-vault',
        `name: ${node.name}`,
        'restapi:',
        `  listen: 127.0.0.1:${node.restPort}`,
        `  connect_address: 127.0.0.1:${node.restPort}`,
        'etcd3:',
        `  hosts: 127.0.0.1:${this.etcdPort}`,
        'bootstrap:',
        '  dcs:',
        `    ttl: ${PATRONI_TTL_S}`,
        '    loop_wait: 1',
        '    retry_timeout: 4',
        '    synchronous_mode: true',
        '    postgresql:',
        '      use_pg_rewind: true',
        '      parameters:',
        // A test cluster: durability against power loss is not what it checks.
        "        fsync: 'off'",
        '  initdb:',
        '    - encoding: UTF8',
        '    - data-checksums',
        '  pg_hba:',
        '    - host all all 127.0.0.1/32 trust',
        '    - host replication all 127.0.0.1/32 trust',
        'postgresql:',
        `  listen: 127.0.0.1:${node.pgPort}`,
        `  connect_address: 127.0.0.1:${node.pgPort}`,
        `  data_dir: ${join(this.dir, node.name)}`,
        `  bin_dir: ${binDir()}`,
        `  pgpass: ${join(this.dir, `${node.name}.pgpass`)}`,
        '  authentication:',
        '    superuser: { username: postgres }',
        '    replication: { username: postgres }',
        '    rewind: { username: postgres }',
        '  parameters:',
        `    unix_socket_directories: ${this.dir}`,
        '',
      ].join('\n'),
    );
    this.own(file);
  }

  /** HAProxy in TCP mode, checking each node's Patroni (README: "High availability" shows the same). */
  private startHaproxy(): void {
    const file = join(this.dir, 'haproxy.cfg');
    const servers = this.nodes.map(
      (node) => `  server ${node.name} 127.0.0.1:${node.pgPort} check port ${node.restPort}`,
    );
    writeFileSync(
      file,
      [
        'global',
        '  maxconn 500',
        'defaults',
        '  mode tcp',
        '  timeout connect 1s',
        '  timeout client 30m',
        '  timeout server 30m',
        '  timeout check 1s',
        'listen postgres',
        `  bind 127.0.0.1:${this.proxyPort}`,
        '  option httpchk GET /primary',
        '  http-check expect status 200',
        `  default-server inter ${CHECK_INTER_MS}ms fall ${CHECK_FALL} rise 1 on-marked-down shutdown-sessions`,
        ...servers,
        '',
      ].join('\n'),
    );
    this.spawn(BINARIES.haproxy, ['-db', '-f', file], false);
  }

  private async rest(node: Node, path: string): Promise<number> {
    const res = await fetch(`http://127.0.0.1:${node.restPort}${path}`, {
      signal: AbortSignal.timeout(1000),
    }).catch(() => null);
    await res?.body?.cancel();
    return res?.status ?? 0;
  }

  /** A leader, a synchronous standby, and HAProxy serving the leader. */
  private async waitUntilReplicated(ms: number): Promise<void> {
    const since = Date.now();
    for (;;) {
      const states = await Promise.all(this.nodes.map((node) => this.rest(node, '/primary')));
      const leader = states.indexOf(200);
      if (
        leader >= 0 &&
        (await this.rest(this.nodes[1 - leader], '/sync')) === 200 &&
        (await this.serving())
      ) {
        return;
      }
      if (Date.now() - since > ms) {
        throw new Error(`the cluster did not come up in ${ms} ms: ${this.logs()}`);
      }
      await sleep(250);
    }
  }

  private async serving(): Promise<boolean> {
    const client = new Client({ connectionString: this.url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      const { rows } = await client.query<{ recovery: boolean }>('SELECT pg_is_in_recovery() AS recovery');
      return rows[0].recovery === false;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
