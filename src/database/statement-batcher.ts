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
 * the later one waits for the next.
 */
export class StatementBatcher<I, O> {
  private readonly waiting: Waiting<I, O>[] = [];
  private inFlight = false;
  private scheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly conflictKey: (item: I) => string,
    private readonly max = 64,
  ) {}

  submit(item: I): Promise<O> {
    if (insideWholeTransaction()) {
      // Its own statement in the request's transaction: other requests' rows must not commit with it.
      return this.run([item]).then(([output]) => output);
    }
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.sendSoon();
    });
  }

  /** Several rows of one caller: they go in the same batch (unless `max` or a conflict key splits them). */
  submitAll(items: readonly I[]): Promise<O[]> {
    if (insideWholeTransaction()) {
      return this.run([...items]);
    }
    const outputs = items.map(
      (item) =>
        new Promise<O>((resolve, reject) => {
          this.waiting.push({ item, resolve, reject });
        }),
    );
    this.sendSoon();
    return Promise.all(outputs);
  }

  private sendSoon(): void {
    if (this.inFlight || this.scheduled) {
      return;
    }
    this.scheduled = true;
    process.nextTick(() => {
      this.scheduled = false;
      if (!this.inFlight) {
        void this.sendNext();
      }
    });
  }

  private async sendNext(): Promise<void> {
    const batch = this.nextBatch();
    if (batch.length === 0) {
      return;
    }
    this.inFlight = true;
    try {
      const outputs = await this.run(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(outputs[i]));
    } catch (err) {
      for (const w of batch) {
        w.reject(err);
      }
    } finally {
      this.inFlight = false;
      void this.sendNext();
    }
  }

  private nextBatch(): Waiting<I, O>[] {
    const batch: Waiting<I, O>[] = [];
    const keys = new Set<string>();
    for (let i = 0; i < this.waiting.length && batch.length < this.max;) {
      const key = this.conflictKey(this.waiting[i].item);
      if (keys.has(key)) {
        i += 1;
        continue;
      }
      keys.add(key);
      batch.push(...this.waiting.splice(i, 1));
    }
    return batch;
  }
}
