import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { Statement } from './prepared-query';
import {
  insideWholeTransaction,
  outOfReach,
  routeIntoWholeTransactions,
  runWhole,
  wholeTransactionRunner,
} from './whole-transaction';

const routed = new WeakSet<DataSource>();

/**
 * One business operation that spans modules (creating a tenant writes its keys, its owner and its management
 * application) must still be one transaction, without a transaction handle crossing module boundaries:
 * the operation's owner calls `run`, and every service it calls, whatever its module, writes through
 * `manager`, which is the open transaction inside `run` and the plain data source outside it.
 */
@Injectable()
export class Transactions {
  private readonly open = new AsyncLocalStorage<EntityManager>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    if (!routed.has(dataSource)) {
      routed.add(dataSource);
      routeIntoWholeTransactions(dataSource);
    }
  }

  /**
   * Runs `work` in one transaction; inside one already, joins it (all or nothing stays the outer one's).
   * Inside a request's whole transaction it is a savepoint: a failed operation undoes only its own part.
   */
  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.current() !== undefined && !insideWholeTransaction()) {
      return work();
    }
    return this.dataSource.transaction((manager) => this.open.run(manager, work));
  }

  /**
   * Runs `work` in one transaction that every query made meanwhile joins, through whatever service
   * (see whole-transaction.ts): a request whose work must commit together with its idempotent answer.
   * `opening` goes in the round trip of the BEGIN, and `work` gets its rows.
   */
  runWhole<T>(work: (opened: object[]) => Promise<T>, opening?: Statement): Promise<T> {
    return runWhole(
      this.dataSource,
      (manager, opened) => this.open.run(manager, () => work(opened)),
      opening,
    );
  }

  /** Whether `run` has a transaction open here. */
  get active(): boolean {
    return this.current() !== undefined;
  }

  /** Where to read and write now: the open transaction, or the data source. */
  get manager(): EntityManager {
    return this.current() ?? this.dataSource.manager;
  }

  /**
   * The connection a statement goes to now: the open transaction's, or the request's whole one's; none
   * outside both, where a statement takes a pooled connection of its own.
   */
  get runner(): QueryRunner | undefined {
    return this.current()?.queryRunner ?? wholeTransactionRunner();
  }

  /** The open transaction; none for work left running after it ended, or moved out of a whole one. */
  private current(): EntityManager | undefined {
    const manager = this.open.getStore();
    return outOfReach(manager?.queryRunner) ? undefined : manager;
  }
}
