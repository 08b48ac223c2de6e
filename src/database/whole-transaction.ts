import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { pipelined, Statement } from './prepared-query';

/**
 * The query runner of a request that runs whole in one transaction (Transactions.runWhole): inside it, every
 * query made through the data source (repositories, `dataSource.query`, a nested `transaction`, which becomes
 * a savepoint) goes to that transaction, whatever service makes it. On the embedded database, whose one
 * connection the transaction holds, a query on another connection would wait for it forever.
 */
const wholeTransaction = new AsyncLocalStorage<QueryRunner>();
/** Whole transactions whose work has returned: nothing joins them any more. */
const finished = new WeakSet<QueryRunner>();
const wholeRunners = new WeakSet<QueryRunner>();
/** What to do once a whole transaction has committed (whenCommitted). */
const onCommit = new WeakMap<QueryRunner, (() => void)[]>();
/** What to send in the COMMIT's round trip, before it (commitWith). */
const closing = new WeakMap<QueryRunner, Statement[]>();

/** Whether the code running now is inside a request's whole transaction. */
export function insideWholeTransaction(): boolean {
  const runner = wholeTransaction.getStore();
  return runner !== undefined && !finished.has(runner) && !runner.isReleased;
}

/** The runner of the request's whole transaction running here, if any. */
export function wholeTransactionRunner(): QueryRunner | undefined {
  return insideWholeTransaction() ? wholeTransaction.getStore() : undefined;
}

/**
 * Runs `fn` outside any whole transaction: for a background task a request starts (a poll), which must not
 * join the request's uncommitted transaction.
 */
export function outsideWholeTransaction<T>(fn: () => T): T {
  return wholeTransaction.exit(fn);
}

/**
 * Calls `fn` once the work done so far is committed: at once outside a whole transaction, after its COMMIT
 * inside one, never after its ROLLBACK. For a wake-up whose target must see the committed rows (a poll).
 */
export function whenCommitted(fn: () => void): void {
  const runner = wholeTransaction.getStore();
  if (runner === undefined || !insideWholeTransaction()) {
    fn();
    return;
  }
  const waiting = onCommit.get(runner);
  if (waiting === undefined) {
    onCommit.set(runner, [fn]);
  } else {
    waiting.push(fn);
  }
}

/**
 * Sends `statement` in the round trip of the COMMIT of the whole transaction running here, just before it:
 * the last write of the transaction at no round trip of its own. If it fails, the COMMIT answers ROLLBACK
 * and runWhole rejects with its error.
 */
export function commitWith(statement: Statement): void {
  const runner = wholeTransaction.getStore();
  if (runner === undefined || !insideWholeTransaction()) {
    throw new Error('commitWith is for the work of an open whole transaction (runWhole)');
  }
  closing.set(runner, [...(closing.get(runner) ?? []), statement]);
}

/** Whether `runner`'s transaction is not to be used from here: it ended, or it is a whole one left behind. */
export function outOfReach(runner: QueryRunner | undefined): boolean {
  return (
    runner !== undefined &&
    (runner.isReleased || (wholeRunners.has(runner) && wholeTransaction.getStore() !== runner))
  );
}

/**
 * Runs `work` in one transaction on its own connection that every query made meanwhile joins. It ends with
 * COMMIT (or ROLLBACK) sent as such, whatever was left open inside: work still running after it (a
 * savepoint of a task the request did not wait for) fails on the released runner rather than turning the
 * COMMIT into a RELEASE SAVEPOINT. `opening`, the transaction's first statement, goes in the round trip of
 * its BEGIN; `work` gets its rows.
 */
export async function runWhole<T>(
  dataSource: DataSource,
  work: (manager: EntityManager, opened: object[]) => Promise<T>,
  opening?: Statement,
): Promise<T> {
  const runner = dataSource.createQueryRunner();
  wholeRunners.add(runner);
  const end = async (statement: 'COMMIT' | 'ROLLBACK'): Promise<void> => {
    finished.add(runner);
    const before = statement === 'COMMIT' ? (closing.get(runner) ?? []) : [];
    try {
      await (before.length === 0
        ? runner.query(statement)
        : pipelined(runner, [...before, { text: statement }]));
    } finally {
      // TypeORM's bookkeeping, which COMMIT sent directly does not update.
      Object.assign(runner, { isTransactionActive: false, transactionDepth: 0 });
    }
  };
  try {
    let opened: object[] = [];
    if (opening === undefined) {
      await runner.startTransaction();
    } else {
      // TypeORM's bookkeeping, which START TRANSACTION sent directly does not update.
      Object.assign(runner, { isTransactionActive: true, transactionDepth: 1 });
      [, opened] = await pipelined(runner, [{ text: 'START TRANSACTION' }, opening]);
    }
    const result = await wholeTransaction.run(runner, () => work(runner.manager, opened));
    await end('COMMIT');
    for (const committed of onCommit.get(runner) ?? []) {
      committed();
    }
    return result;
  } catch (err) {
    if (runner.isTransactionActive) {
      await end('ROLLBACK').catch(() => undefined);
    }
    throw err;
  } finally {
    await runner.release();
  }
}

/**
 * Makes `dataSource.createQueryRunner` hand out the open whole transaction's runner inside one (its release
 * does nothing: the transaction's owner releases it), and a new runner everywhere else. Work left running
 * after the transaction ended gets new runners again.
 */
export function routeIntoWholeTransactions(dataSource: DataSource): void {
  const create = dataSource.createQueryRunner.bind(dataSource);
  dataSource.createQueryRunner = (mode) => {
    const runner = wholeTransaction.getStore();
    return runner !== undefined && insideWholeTransaction() ? borrowed(runner) : create(mode);
  };
}

function borrowed(runner: QueryRunner): QueryRunner {
  return new Proxy(runner, {
    get: (target, property, receiver) =>
      property === 'release' ? () => Promise.resolve() : (Reflect.get(target, property, receiver) as unknown),
  });
}
