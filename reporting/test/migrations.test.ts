import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db';
import { migrateReporting, REPORTING_MIGRATIONS } from '../src/db/migrate';

// Before the projections had migrations, the consumer ran at every start what 0000 and 0001 now hold, statement for
// statement (IF NOT EXISTS throughout): a database made then holds 0000's tables, with or without 0001's columns,
// and no record of either.
const unrecorded = (tag: string) =>
  readFileSync(resolve(REPORTING_MIGRATIONS, `${tag}.sql`), 'utf8').replaceAll('--> statement-breakpoint', '');
const FIRST_SHAPE = unrecorded('0000_projections');
const REFUND_COLUMNS = unrecorded('0001_refunds_cancels');

/** Every committed migration: a database at the current schema has recorded each once. */
const MIGRATIONS: number = JSON.parse(readFileSync(resolve(REPORTING_MIGRATIONS, 'meta/_journal.json'), 'utf8')).entries
  .length;

const MINUTE = ['00000000-0000-4000-8000-000000000001', '2026-12-01T10:00:00Z'] as const;

const dbs: TestDatabase[] = [];
const pools: pg.Pool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await Promise.all(dbs.map((d) => d.drop()));
});

async function database(prelude?: string) {
  const db = await createTestDatabase('reporting_migrate');
  dbs.push(db);
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  pools.push(pool);
  if (prelude) {
    await pool.query(prelude);
    await pool.query(
      `INSERT INTO reporting.minutes (tenant_id, event_id, minute, holds, gross) VALUES ('t1', $1, $2, 3, 4500)`,
      [...MINUTE],
    );
  }
  return { db, pool };
}

/** The projections' tables, columns (type, default, nullability) and indexes. */
const shape = async (db: TestDatabase) => ({
  columns: await db.query(
    `SELECT table_name, column_name, data_type, column_default, is_nullable FROM information_schema.columns
      WHERE table_schema = 'reporting' AND table_name <> '__migrations' ORDER BY table_name, column_name`,
  ),
  indexes: await db.query(
    `SELECT indexname, indexdef FROM pg_indexes
      WHERE schemaname = 'reporting' AND tablename <> '__migrations' ORDER BY indexname`,
  ),
});

const applied = (db: TestDatabase) =>
  db.query<{ n: number }>('SELECT count(*)::int AS n FROM reporting.__migrations').then((r) => r[0]!.n);

describe('the reporting projections migrate with ordered migrations', () => {
  it('journal entries are in time order: the migrator skips an entry not newer than the last applied one', () => {
    const { entries } = JSON.parse(readFileSync(resolve(REPORTING_MIGRATIONS, 'meta/_journal.json'), 'utf8'));
    const whens: number[] = entries.map((e: { when: number }) => e.when);
    for (let i = 1; i < whens.length; i++) expect(whens[i]).toBeGreaterThan(whens[i - 1]!);
  });

  it('a fresh database reaches the current schema, concurrent migrators and a second run included', async () => {
    const { db, pool } = await database();
    await Promise.all([migrateReporting(pool), migrateReporting(pool), migrateReporting(pool)]);
    const current = await shape(db);
    expect(current.columns.filter((c) => c.table_name === 'minutes').map((c) => c.column_name)).toEqual(
      expect.arrayContaining(['refunds', 'seats_refunded', 'cancels']),
    );
    expect(current.columns.filter((c) => c.table_name === 'orders').map((c) => c.column_name)).toContain('ga');
    expect(await applied(db)).toBe(MIGRATIONS);
    await migrateReporting(pool);
    expect(await shape(db)).toEqual(current);
    expect(await applied(db)).toBe(MIGRATIONS);
  });

  it('databases made before migrations, at the first shape or the last, reach the same schema and keep their rows', async () => {
    const fresh = await database();
    await migrateReporting(fresh.pool);
    const current = await shape(fresh.db);

    for (const prelude of [FIRST_SHAPE, FIRST_SHAPE + REFUND_COLUMNS]) {
      const { db, pool } = await database(prelude);
      await migrateReporting(pool);
      expect(await shape(db)).toEqual(current);
      expect(await applied(db)).toBe(MIGRATIONS);
      expect(
        await db.query(
          'SELECT holds, gross::int, refunds, cancels FROM reporting.minutes WHERE event_id = $1 AND minute = $2',
          [...MINUTE],
        ),
      ).toEqual([{ holds: 3, gross: 4500, refunds: 0, cancels: 0 }]);
    }
  });
});
