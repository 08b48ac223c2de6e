import { insideWholeTransaction } from './whole-transaction';

/** One caller's item, waiting for the batch that carries it. */
interface Waiting<I, O> {
  item: I;
  resolve: (output: O) => void;
  reject: (err: unknown) => void;
}

/**
 * Sends concurrent requests' rows as one statement. A row submitted while no batch is in flight goes as soon
 * as the code running now has settled (process.nextTick: before any I/O or timer, so at low load nothing
 * waits), together with every row submitted meanwhile: requests answered by one statement reach their next
 * statement in the same tick, and go on together instead of one alone and the rest after it. Rows submitted
 * while a batch is in flight wait for it and then go together, up to `max` at a time, so under load one
 * round trip (and one commit) serves many requests where each would otherwise pay its own; on the profile
 * that is the socket write per statement.
 *
 * `run` gets the rows and answers one output per row, in order; if it throws, every row of that batch gets
 * the error. Rows with the same `conflictKey` never share a batch (one statement must not touch a row twice):
 * the later one waits for the next. Each partition (tenant) is batched on its own.
 */
export class StatementBatcher<I, O> {
  /** The rows of each partition (see `partition`), waiting or in flight; a lane is dropped when idle. */
  private readonly lanes = new Map<string, Lane<I, O>>();

  /**
   * `partition` (the tenant): rows of different partitions never share a statement, and each partition has
   * its own batch in flight (batched per tenant, never across tenants).
   */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly conflictKey: (item: I) => string,
    private readonly max: number,
    private readonly partition: (item: I) => string,
    /** Whether a row submitted now goes alone, in the transaction open at the call (by default a request's whole one). */
    private readonly alone: () => boolean = insideWholeTransaction,
  ) {}

  submit(item: I): Promise<O> {
    if (this.alone()) {
      // Its own statement in the request's transaction: other requests' rows must not commit with it.
      return this.run([item]).then(([output]) => output);
    }
    return new Promise<O>((resolve, reject) => {
      const lane = this.laneOf(item);
      lane.waiting.push({ item, resolve, reject });
      this.sendSoon(lane);
    });
  }

  /** Several rows of one caller: they go in the same batch (unless `max`, a conflict key or partitions split them). */
  submitAll(items: readonly I[]): Promise<O[]> {
    if (this.alone()) {
      return this.run([...items]);
    }
    const lanes = new Set<Lane<I, O>>();
    const outputs = items.map(
      (item) =>
        new Promise<O>((resolve, reject) => {
          const lane = this.laneOf(item);
          lane.waiting.push({ item, resolve, reject });
          lanes.add(lane);
        }),
    );
    lanes.forEach((lane) => this.sendSoon(lane));
    return Promise.all(outputs);
  }

  private laneOf(item: I): Lane<I, O> {
    const key = this.partition(item);
    let lane = this.lanes.get(key);
    if (lane === undefined) {
      lane = { key, waiting: [], inFlight: false, scheduled: false };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  private sendSoon(lane: Lane<I, O>): void {
    if (lane.inFlight || lane.scheduled) {
      return;
    }
    lane.scheduled = true;
    process.nextTick(() => {
      lane.scheduled = false;
      if (!lane.inFlight) {
        void this.sendNext(lane);
      }
    });
  }

  private async sendNext(lane: Lane<I, O>): Promise<void> {
    const batch = this.nextBatch(lane);
    if (batch.length === 0) {
      if (!lane.scheduled && this.lanes.get(lane.key) === lane) {
        this.lanes.delete(lane.key);
      }
      return;
    }
    lane.inFlight = true;
    try {
      const outputs = await this.run(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(outputs[i]));
    } catch (err) {
      for (const w of batch) {
        w.reject(err);
      }
    } finally {
      lane.inFlight = false;
      void this.sendNext(lane);
    }
  }

  private nextBatch(lane: Lane<I, O>): Waiting<I, O>[] {
    const batch: Waiting<I, O>[] = [];
    const keys = new Set<string>();
    for (let i = 0; i < lane.waiting.length && batch.length < this.max;) {
      const key = this.conflictKey(lane.waiting[i].item);
      if (keys.has(key)) {
        i += 1;
        continue;
      }
      keys.add(key);
      batch.push(...lane.waiting.splice(i, 1));
    }
    return batch;
  }
}

/** One partition's rows: those waiting, and whether a batch of it is in flight or about to be sent. */
interface Lane<I, O> {
  key: string;
  waiting: Waiting<I, O>[];
  inFlight: boolean;
  scheduled: boolean;
}
