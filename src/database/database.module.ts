import { Global, Module } from '@nestjs/common';
import { Database } from './database.service';
import { Transactions } from './transactions';

/** Makes the data layer injectable everywhere (it belongs to no resource). */
@Global()
@Module({ providers: [Transactions, Database], exports: [Transactions, Database] })
export class DatabaseModule {}
