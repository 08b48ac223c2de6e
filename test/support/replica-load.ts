import { DATABASE_RETRY_AFTER_SECONDS } from '../../src/common/database-unavailable';
import { SpawnedServer } from './spawned-server';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A vault process of a test (a spawned server) and where it listens. */
export interface Replica {
  base: string;
  server: SpawnedServer;
}

/** Writers and a reader across both replicas until stopped: every answer is kept, every 201 remembered. */
export class Load {
  readonly acknowledged = new Map<string, string>();
  readonly statuses: number[] = [];
  readonly unexpected: string[] = [];
  private stopped = false;
  private loops: Promise<void>[] = [];
  private counter = 0;

  constructor(
    private readonly replicas: Replica[],
    private readonly key: string,
  ) {}

  start(writers = 4): void {
    this.stopped = false;
    this.loops = [
      ...Array.from({ length: writers }, (_, i) => this.loop(() => this.write(this.replicas[i % 2]))),
      this.loop(() => this.read()),
    ];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /** How many answers of `status` arrived since `from` (an index into `statuses`). */
  count(status: number, from = 0): number {
    return this.statuses.slice(from).filter((s) => s === status).length;
  }

  private async loop(step: () => Promise<void>): Promise<void> {
    // Bounded: a test that hangs elsewhere still ends its load.
    for (const until = Date.now() + 180_000; !this.stopped && Date.now() < until;) {
      await step();
      await sleep(25);
    }
  }

  private async write(replica: Replica): Promise<void> {
    const data = `failover ${this.counter++}`;
    const res = await this.call(replica, '/tokens', { type: 'token', data });
    if (res?.status === 201) {
      this.acknowledged.set(((await res.json()) as { id: string }).id, data);
    }
  }

  private async read(): Promise<void> {
    const ids = [...this.acknowledged.keys()];
    if (ids.length > 0) {
      await this.call(this.replicas[ids.length % 2], `/tokens/${ids[ids.length - 1]}`);
    }
  }

  private async call(replica: Replica, path: string, body?: unknown): Promise<Response | null> {
    try {
      const res = await fetch(`${replica.base}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'BT-API-KEY': this.key, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
      this.statuses.push(res.status);
      if (res.status === 503 && res.headers.get('retry-after') !== String(DATABASE_RETRY_AFTER_SECONDS)) {
        this.unexpected.push(`503 without Retry-After on ${path}`);
      } else if (![200, 201, 503].includes(res.status)) {
        this.unexpected.push(`${res.status} on ${path}: ${await res.text()}`);
      }
      return res;
    } catch (err) {
      this.unexpected.push(`${path}: ${String(err)}`);
      return null;
    }
  }
}
