import { AsyncResource } from 'node:async_hooks';
import { QueryFailedError } from 'typeorm';
import { Database } from '../../src/database/database.service';
import { Transactions } from '../../src/database/transactions';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';

/** The data layer on the test run's database, without the application. */
describe('Database', () => {
  let db: TestDataSource;
  let data: Database;

  beforeAll(async () => {
    db = await openTestDataSource();
    data = db.dataLayer;
    await db.dataSource.query('CREATE TABLE data_layer_items (id int PRIMARY KEY, label text NOT NULL)');
  });

  afterAll(() => db.close());

  beforeEach(() => db.dataSource.query('DELETE FROM data_layer_items'));

  it('answers rows for a SELECT, an INSERT … RETURNING and an UPDATE … RETURNING alike', async () => {
    expect(
      await data.query('INSERT INTO data_layer_items VALUES (1, $1) RETURNING id, label', ['a']),
    ).toEqual([{ id: 1, label: 'a' }]);
    expect(await data.query('UPDATE data_layer_items SET label = $1 RETURNING label', ['b'])).toEqual([
      { label: 'b' },
    ]);
    expect(
      await data.query('UPDATE data_layer_items SET label = $1 WHERE id = 2 RETURNING label', ['c']),
    ).toEqual([]);
    expect(await data.query('SELECT label FROM data_layer_items')).toEqual([{ label: 'b' }]);
  });

  it('counts the rows a statement touched', async () => {
    await data.execute('INSERT INTO data_layer_items VALUES (1, $1), (2, $1)', ['a']);
    expect(await data.execute('UPDATE data_layer_items SET label = $1', ['b'])).toBe(2);
    expect(await data.execute('DELETE FROM data_layer_items WHERE id = 3')).toBe(0);
  });

  it('gives the connection of a statement outside a transaction back to the pool, failed or not', async () => {
    await expect(data.query('SELECT * FROM data_layer_no_such_table')).rejects.toThrow(QueryFailedError);
    await expect(data.alone({ text: 'SELECT * FROM data_layer_no_such_table' })).rejects.toThrow(
      QueryFailedError,
    );
    expect(await data.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    const counts = data.poolCounts();
    expect(counts?.idleCount).toBe(counts?.totalCount);
  });

  it('runs a named statement again and again, prepared or not', async () => {
    const unnamed = new Database(db.dataSource, new Transactions(db.dataSource), {
      databasePreparedStatements: false,
    });
    for (const layer of [data, unnamed, data]) {
      expect(
        await layer.prepared('data-layer.count', 'SELECT count(*)::int AS n FROM data_layer_items', []),
      ).toEqual([{ n: 0 }]);
    }
  });

  it('puts every statement sent inside `transaction` in it: all commit, or none', async () => {
    await data.transaction(async () => {
      await data.query('INSERT INTO data_layer_items VALUES (1, $1)', ['a']);
      await data.prepared('data-layer.insert', 'INSERT INTO data_layer_items VALUES ($1, $2)', [2, 'b']);
      expect(data.inTransaction).toBe(true);
    });
    await expect(
      data.transaction(async () => {
        await data.execute('INSERT INTO data_layer_items VALUES (3, $1)', ['c']);
        await data.query('INSERT INTO data_layer_items VALUES (1, $1)', ['duplicate']);
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(data.inTransaction).toBe(false);
    expect(await data.query('SELECT id FROM data_layer_items ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('joins an open transaction instead of opening a second one', async () => {
    await expect(
      data.transaction(async () => {
        await data.query('INSERT INTO data_layer_items VALUES (1, $1)', ['a']);
        await data.transaction(() => data.query('INSERT INTO data_layer_items VALUES (2, $1)', ['b']));
        throw new Error('undo both');
      }),
    ).rejects.toThrow('undo both');
    expect(await data.query('SELECT id FROM data_layer_items')).toEqual([]);
  });

  it('batches rows of one tenant together and never rows of two tenants', async () => {
    const statements: string[][] = [];
    const batcher = data.batcher(
      (items: { tenant: string; id: number }[]) => {
        statements.push(items.map((i) => `${i.tenant}:${i.id}`));
        return Promise.resolve(items.map((i) => i.id));
      },
      { tenant: (i) => i.tenant, conflictKey: (i) => String(i.id), max: 10 },
    );
    const answers = await Promise.all([
      batcher.submit({ tenant: 'a', id: 1 }),
      batcher.submit({ tenant: 'b', id: 2 }),
      batcher.submit({ tenant: 'a', id: 3 }),
    ]);
    expect(answers).toEqual([1, 2, 3]);
    expect(statements.sort()).toEqual([['a:1', 'a:3'], ['b:2']]);
  });

  it('sends a row submitted inside a transaction alone, in that transaction', async () => {
    const statements: number[][] = [];
    const batcher = data.batcher(
      async (items: { tenant: string; id: number }[]) => {
        statements.push(items.map((i) => i.id));
        for (const { id } of items) {
          await data.query('INSERT INTO data_layer_items VALUES ($1, $2)', [id, 'x']);
        }
        return items.map(() => data.inTransaction);
      },
      { tenant: (i) => i.tenant, conflictKey: (i) => String(i.id), max: 10 },
    );
    // Another request's row, submitted in the same tick from outside the transaction.
    const submitOutside = AsyncResource.bind(() => batcher.submit({ tenant: 'a', id: 2 }));
    let outside: Promise<boolean> | undefined;
    await expect(
      data.transaction(async () => {
        const inside = batcher.submit({ tenant: 'a', id: 1 });
        outside = submitOutside();
        expect(await inside).toBe(true);
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await outside).toBe(false);
    expect(statements).toEqual([[1], [2]]);
    expect(await data.query('SELECT id FROM data_layer_items')).toEqual([{ id: 2 }]);
  });

  /** `beside` runs in a transaction that wrote row 1 ('inside') and is then rolled back. */
  async function besideUndone(beside: () => Promise<void>): Promise<void> {
    await expect(
      data.transaction(async () => {
        await data.execute('INSERT INTO data_layer_items VALUES (1, $1)', ['inside']);
        await beside();
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
  }

  // The embedded database's one connection is the open transaction's: nothing runs beside it there.
  const onPostgres = process.env.DATABASE_URL ? it : it.skip;

  onPostgres('runs a statement `alone` outside the open transaction', async () => {
    await besideUndone(async () => {
      const { rowCount } = await data.alone({
        name: 'data-layer.alone',
        text: 'INSERT INTO data_layer_items VALUES (2, $1)',
        values: ['alone'],
      });
      expect(rowCount).toBe(1);
    });
    expect(await data.query('SELECT id, label FROM data_layer_items')).toEqual([{ id: 2, label: 'alone' }]);
  });

  it('holds a connection for `onOwnConnection` and gives it back after', async () => {
    const rows = await data.onOwnConnection(async (connection) => {
      await connection.query('INSERT INTO data_layer_items VALUES (1, $1)', ['own']);
      return connection.query('SELECT id, label FROM data_layer_items');
    });
    expect(rows).toEqual([{ id: 1, label: 'own' }]);
    await expect(data.onOwnConnection(() => Promise.reject(new Error('failed work')))).rejects.toThrow(
      'failed work',
    );
    expect(await data.query('SELECT count(*)::int AS n FROM data_layer_items')).toEqual([{ n: 1 }]);
  });

  onPostgres('keeps a transaction on its own connection apart from the one open at the call', async () => {
    await besideUndone(() =>
      data.onOwnConnection(async (connection) => {
        await connection.query('START TRANSACTION');
        await connection.query('INSERT INTO data_layer_items VALUES (2, $1)', ['own']);
        expect(await connection.query('SELECT id FROM data_layer_items')).toEqual([{ id: 2 }]);
        expect(await data.query('SELECT id FROM data_layer_items')).toEqual([{ id: 1 }]);
        await connection.query('COMMIT');
      }),
    );
    expect(await data.query('SELECT id, label FROM data_layer_items')).toEqual([{ id: 2, label: 'own' }]);
  });
});
