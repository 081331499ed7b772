import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db';
import { committing } from '../src/db/batched-tx';
import { type Database, openDatabase } from '../src/db/client';

let db: TestDatabase;
let database: Database;
beforeAll(async () => {
  db = await createTestDatabase('cell_batched_tx');
  await db.query('CREATE TABLE t (id int PRIMARY KEY, v text NOT NULL)');
  // Checked at COMMIT, not at the statement: a final statement can succeed and its COMMIT fail.
  await db.query('CREATE TABLE d (id int, CONSTRAINT d_once UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)');
  database = openDatabase(db.url, 2, 'batched-tx-test');
});
afterAll(async () => {
  await database?.close();
  await db?.drop();
});

/** Sessions left idle in a transaction, in this file's database only (other files run beside it on the server). */
const idleInTransaction = () =>
  db.query(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state LIKE 'idle in transaction%' AND datname = current_database()",
  );

/** Round trips the pool's clients made while `fn` ran: each ends with the server's ReadyForQuery. */
async function roundTrips(fn: () => Promise<unknown>): Promise<number> {
  const clients: pg.PoolClient[] = await Promise.all([database.pool.connect(), database.pool.connect()]);
  let count = 0;
  const count1 = () => count++;
  const connections = clients.map((c) => (c as unknown as { connection: NodeJS.EventEmitter }).connection);
  for (const c of connections) c.on('readyForQuery', count1);
  for (const c of clients) c.release();
  try {
    await fn();
  } finally {
    for (const c of connections) c.off('readyForQuery', count1);
  }
  return count;
}

describe('a write transaction sends BEGIN with its first statement', () => {
  it('costs one round trip fewer: BEGIN + first statement, second statement, COMMIT', async () => {
    const trips = await roundTrips(() =>
      database.db.transaction(async (tx) => {
        await tx.execute(sql`INSERT INTO t VALUES (1, ${'a'})`);
        await tx.execute(sql`UPDATE t SET v = 'b' WHERE id = 1`);
      }),
    );
    expect(trips).toBe(3);
    expect(await db.query('SELECT v FROM t WHERE id = 1')).toEqual([{ v: 'b' }]);
  });

  it('the first statement runs inside the transaction: its row lock is held until COMMIT', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const tx = database.db.transaction(async (t) => {
      await t.execute(sql`SELECT * FROM t WHERE id = 1 FOR UPDATE`);
      locked();
      await held;
    });
    await isLocked;
    // Outside the pool: NOWAIT fails at once while the transaction holds the row (autocommit would have let go).
    await expect(db.query('SELECT * FROM t WHERE id = 1 FOR UPDATE NOWAIT')).rejects.toMatchObject({ code: '55P03' });
    release();
    await tx;
    expect(await db.query('SELECT id FROM t WHERE id = 1 FOR UPDATE NOWAIT')).toEqual([{ id: 1 }]);
  });

  it('a failing first statement rolls the whole transaction back and leaves the connection usable', async () => {
    await expect(
      database.db.transaction(async (t) => {
        await t.execute(sql`INSERT INTO t VALUES (1, 'duplicate')`);
      }),
    ).rejects.toMatchObject({ cause: { code: '23505' } });
    await expect(
      database.db.transaction(async (t) => {
        await t.execute(sql`INSERT INTO t VALUES (2, 'kept?')`);
        await t.execute(sql`INSERT INTO t VALUES (1, 'duplicate')`);
      }),
    ).rejects.toMatchObject({ cause: { code: '23505' } });
    expect(await db.query('SELECT id FROM t ORDER BY id')).toEqual([{ id: 1 }]);
    // Both connections answer plain queries outside any transaction afterwards.
    const states = await Promise.all(
      [0, 1].map(async () => {
        const c = await database.pool.connect();
        try {
          return (await c.query<{ s: string }>("SELECT current_setting('transaction_isolation') AS s")).rows[0]!.s;
        } finally {
          c.release();
        }
      }),
    );
    expect(states).toEqual(['read committed', 'read committed']);
    expect(await idleInTransaction()).toEqual([{ n: 0 }]);
  });

  it('a transaction that ends before any statement sends nothing, and a thrown one rolls back', async () => {
    expect(await roundTrips(() => database.db.transaction(async () => 'nothing'))).toBe(0);
    await expect(
      database.db.transaction(async () => {
        throw new Error('before any statement');
      }),
    ).rejects.toThrow('before any statement');
    const trips = await roundTrips(() =>
      database.db
        .transaction(async (t) => {
          await t.execute(sql`INSERT INTO t VALUES (3, 'c')`);
          throw new Error('after a statement');
        })
        .catch(() => {}),
    );
    expect(trips).toBe(2);
    expect(await db.query('SELECT id FROM t WHERE id = 3')).toEqual([]);
  });

  it('a statement without parameters and one returning rows come back as themselves', async () => {
    const rows = await database.db.transaction(async (t) => {
      const first = await t.execute(sql.raw('SELECT 41 + 1 AS answer'));
      return first.rows;
    });
    expect(rows).toEqual([{ answer: 42 }]);
  });
});

describe('a final statement commits the transaction in its own round trip', () => {
  it('BEGIN + first statement, then the final statement + COMMIT: two round trips, everything committed', async () => {
    const trips = await roundTrips(() =>
      database.db.transaction(async (tx) => {
        await tx.execute(sql`INSERT INTO t VALUES (10, 'a')`);
        await tx.execute(committing(sql`UPDATE t SET v = ${'final'} WHERE id = 10 RETURNING v`));
      }),
    );
    expect(trips).toBe(2);
    expect(await db.query('SELECT v FROM t WHERE id = 10')).toEqual([{ v: 'final' }]);
    // A transaction of one final statement is one round trip, and its rows come back.
    let rows: unknown[] = [];
    expect(
      await roundTrips(() =>
        database.db.transaction(async (tx) => {
          rows = (await tx.execute(committing(sql`INSERT INTO t VALUES (11, 'one') RETURNING id`))).rows;
        }),
      ),
    ).toBe(1);
    expect(rows).toEqual([{ id: 11 }]);
  });

  it('a failing final statement commits nothing of the transaction', async () => {
    await expect(
      database.db.transaction(async (tx) => {
        await tx.execute(sql`INSERT INTO t VALUES (12, 'before')`);
        await tx.execute(committing(sql`INSERT INTO t VALUES (10, 'duplicate')`));
      }),
    ).rejects.toMatchObject({ cause: { code: '23505' } });
    expect(await db.query('SELECT id FROM t WHERE id = 12')).toEqual([]);
    expect(await idleInTransaction()).toEqual([{ n: 0 }]);
  });

  it('a COMMIT that fails after the final statement succeeded rejects it, and nothing is kept', async () => {
    await expect(
      database.db.transaction(async (tx) => {
        await tx.execute(sql`INSERT INTO t VALUES (13, 'before')`);
        await tx.execute(committing(sql`INSERT INTO d VALUES (1), (1)`));
      }),
    ).rejects.toMatchObject({ cause: { code: '23505', constraint: 'd_once' } });
    expect(await db.query('SELECT id FROM t WHERE id = 13')).toEqual([]);
    expect(await db.query('SELECT count(*)::int AS n FROM d')).toEqual([{ n: 0 }]);
    // The connections carry on.
    await database.db.transaction(async (tx) => {
      await tx.execute(committing(sql`INSERT INTO d VALUES (2)`));
    });
    expect(await db.query('SELECT id FROM d')).toEqual([{ id: 2 }]);
  });

  it('refuses a statement after the final one instead of running it outside the transaction', async () => {
    const outcome = database.db.transaction(async (tx) => {
      await tx.execute(committing(sql`INSERT INTO t VALUES (14, 'committed')`));
      await tx.execute(sql`INSERT INTO t VALUES (15, 'would run alone')`);
    });
    await expect(outcome).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/after the transaction committed with its final statement/) },
    });
    expect(await db.query('SELECT id FROM t WHERE id IN (14, 15) ORDER BY id')).toEqual([{ id: 14 }]);
    // The next transaction on the same connections starts clean.
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`INSERT INTO t VALUES (16, 'next')`);
    });
    expect(await db.query('SELECT id FROM t WHERE id = 16')).toEqual([{ id: 16 }]);
  });

  it('refuses a final statement outside a transaction, and runs nothing of it', async () => {
    await expect(database.db.execute(committing(sql`INSERT INTO t VALUES (17, 'alone')`))).rejects.toMatchObject({
      cause: { message: 'a final statement outside a transaction' },
    });
    expect(await db.query('SELECT id FROM t WHERE id = 17')).toEqual([]);
    expect((await database.db.execute(sql`SELECT 1 AS one`)).rows).toEqual([{ one: 1 }]);
  });
});
