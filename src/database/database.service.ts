import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool, QueryResult } from 'pg';
import { DataSource, EntityManager, EntityTarget, ObjectLiteral, Repository, TypeORMError } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { pipelined, sendPooled, sendStatement, Statement } from './prepared-query';
import { StatementBatcher } from './statement-batcher';
import { Transactions } from './transactions';
import {
  commitWith,
  insideWholeTransaction,
  outsideWholeTransaction,
  whenCommitted,
} from './whole-transaction';

/** How a batcher groups rows: never two rows of one `conflictKey` in one statement, at most `max` rows. */
export interface BatchShape<I> {
  /** The tenant the row belongs to: rows of different tenants never share a statement. */
  tenant: (item: I) => string;
  conflictKey: (item: I) => string;
  max: number;
}

/** How many connections the pool holds, how many are idle, how many queries wait for one. */
export interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** A pooled connection held for one piece of work (Database.onOwnConnection). */
export interface OwnConnection {
  /** The rows `text` answers, sent on this connection. */
  query<T extends object = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
}

/**
 * The one way the vault reaches its database. Repositories send their statements through it; it runs them in
 * the transaction open at the call (the one `transaction` or a request's `runWhole` opened, whatever module
 * opened it), or on a pooled connection outside one. A statement given a name is prepared once per
 * connection unless DATABASE_PREPARED_STATEMENTS=false (the pooler switch), and every statement answers its
 * rows, whatever TypeORM would have made of an `UPDATE … RETURNING`.
 */
@Injectable()
export class Database {
  private readonly named: boolean;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'databasePreparedStatements'>,
  ) {
    this.named = config.databasePreparedStatements;
  }

  /** The rows `text` answers. */
  async query<T extends object = Record<string, unknown>>(
    text: string,
    values: unknown[] = [],
  ): Promise<T[]> {
    return (await this.send<T>({ text, values }, false)).rows;
  }

  /** How many rows `text` (an UPDATE, DELETE or INSERT) touched. */
  async execute(text: string, values: unknown[] = []): Promise<number> {
    return (await this.send({ text, values }, false)).rowCount ?? 0;
  }

  /**
   * The rows of one of the hot, fixed statements, prepared under `name` on each connection (parsed and
   * planned once there, not per request). A name stands for one text.
   */
  async prepared<T extends object = Record<string, unknown>>(
    name: string,
    text: string,
    values: unknown[],
  ): Promise<T[]> {
    return (await this.send<T>({ name, text, values }, this.named)).rows;
  }

  /** `statements` in one round trip on the open transaction's connection (see `pipelined`). */
  pipelined(statements: Statement[]): Promise<object[][]> {
    const runner = this.manager.queryRunner;
    if (runner === undefined) {
      throw new Error('pipelined statements run inside a transaction');
    }
    return pipelined(
      runner,
      statements.map((s) => this.asSent(s)),
    );
  }

  /**
   * Runs `work` in one transaction; every statement sent meanwhile, through any repository, joins it.
   * Inside one already, `work` joins that one.
   */
  transaction<T>(work: () => Promise<T>): Promise<T> {
    return this.transactions.run(work);
  }

  /** See Transactions.runWhole: a request that commits together with its idempotent answer. */
  runWhole<T>(work: (opened: object[]) => Promise<T>, opening?: Statement): Promise<T> {
    return this.transactions.runWhole(work, opening === undefined ? undefined : this.asSent(opening));
  }

  /**
   * Sends `statement` in the round trip of the COMMIT of the request's whole transaction (runWhole), just
   * before it: its last write at no round trip of its own. If it fails, runWhole rejects with its error.
   */
  commitWith(statement: Statement): void {
    commitWith(this.asSent(statement));
  }

  /** Whether a transaction is open here. */
  get inTransaction(): boolean {
    return this.transactions.active || insideWholeTransaction();
  }

  /** Runs `fn` after the work so far commits (at once outside a request's whole transaction). */
  whenCommitted(fn: () => void): void {
    whenCommitted(fn);
  }

  /** Runs `fn` outside the request's whole transaction: background work it starts. */
  outsideRequest<T>(fn: () => T): T {
    return outsideWholeTransaction(fn);
  }

  /**
   * `statement` on a pooled connection of its own, in no transaction open here (neither `transaction`'s nor
   * a request's whole one), answered as `pg` answers; a name prepares it as `prepared` does. For what must
   * stand whatever becomes of the work around it: rate-limit counters.
   */
  async alone<T extends object = Record<string, unknown>>(statement: Statement): Promise<QueryResult<T>> {
    return sendPooled<T>(this.pool(), statement, this.named);
  }

  /**
   * Runs `work` with a pooled connection held for it alone, in no transaction open here (neither
   * `transaction`'s nor a request's whole one). What `work` sends through `connection` goes there; what it
   * sends through this Database goes where it would anyway. For a transaction kept open beside the work: a
   * lock it holds.
   */
  async onOwnConnection<T>(work: (connection: OwnConnection) => Promise<T>): Promise<T> {
    const runner = outsideWholeTransaction(() => this.dataSource.createQueryRunner());
    try {
      return await work({
        query: async <R extends object>(text: string, values: unknown[] = []) =>
          (await sendStatement<R>(runner, { text, values }, false)).rows,
      });
    } finally {
      await runner.release();
    }
  }

  /** TypeORM's repository of an entity, on the open transaction: for a repository's entity reads and saves. */
  repository<E extends ObjectLiteral>(entity: EntityTarget<E>): Repository<E> {
    return this.manager.getRepository(entity);
  }

  /**
   * A batcher whose statements carry rows of one tenant each (see StatementBatcher). A row submitted inside a
   * transaction goes alone in it: a batch runs where its first row was submitted, and other requests' rows
   * must not join that row's transaction.
   */
  batcher<I, O>(run: (items: I[]) => Promise<O[]>, shape: BatchShape<I>): StatementBatcher<I, O> {
    return new StatementBatcher(run, shape.conflictKey, shape.max, shape.tenant, () => this.inTransaction);
  }

  /** On the open transaction's connection, or on a pooled one of its own outside any. */
  private send<T extends object>(statement: Statement, named: boolean): Promise<QueryResult<T>> {
    const runner = this.transactions.runner;
    return runner === undefined
      ? sendPooled<T>(this.pool(), statement, named)
      : sendStatement<T>(runner, statement, named);
  }

  private pool(): Pool {
    const pool = (this.dataSource.driver as unknown as { master?: Pool }).master;
    if (pool === undefined) {
      throw new TypeORMError('Driver not Connected');
    }
    return pool;
  }

  /** `statement` without its name where named statements are off (the pooler switch). */
  private asSent(statement: Statement): Statement {
    return this.named ? statement : { text: statement.text, values: statement.values };
  }

  /** Where statements go now: the open transaction's manager, or the data source's. */
  get manager(): EntityManager {
    return this.transactions.manager;
  }

  /** The connection pool's counts (none on a database without a pool). */
  poolCounts(): PoolCounts | undefined {
    const pool = (this.dataSource.driver as unknown as { master?: PoolCounts }).master;
    return pool === undefined
      ? undefined
      : { totalCount: pool.totalCount, idleCount: pool.idleCount, waitingCount: pool.waitingCount };
  }

  /** The data source, for what only it does (migrations, the change feed's listening connection). */
  get source(): DataSource {
    return this.dataSource;
  }
}
