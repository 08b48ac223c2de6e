import { Global, Injectable, Module } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager } from 'typeorm';

/**
 * One business operation that spans modules (creating a tenant writes its keys, its owner and its management
 * application) must still be one transaction, without a transaction handle crossing module boundaries:
 * the operation's owner calls `run`, and every service it calls, whatever its module, writes through
 * `manager`, which is the open transaction inside `run` and the plain data source outside it.
 */
@Injectable()
export class Transactions {
  private readonly open = new AsyncLocalStorage<EntityManager>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Runs `work` in one transaction; inside one already, joins it (all or nothing stays the outer one's). */
  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.open.getStore() !== undefined) {
      return work();
    }
    return this.dataSource.transaction((manager) => this.open.run(manager, work));
  }

  /** Whether `run` has a transaction open here. */
  get active(): boolean {
    return this.open.getStore() !== undefined;
  }

  /** Where to read and write now: the open transaction, or the data source. */
  get manager(): EntityManager {
    return this.open.getStore() ?? this.dataSource.manager;
  }
}

/** Makes Transactions injectable everywhere (it belongs to no resource). */
@Global()
@Module({ providers: [Transactions], exports: [Transactions] })
export class TransactionsModule {}
