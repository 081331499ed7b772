import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db';
import { migrateReporting, REPORTING_MIGRATIONS } from '../src/db/migrate';

// What the consumer ran at every start before the projections had migrations: the first shape, and the
// columns it appended later with ADD COLUMN IF NOT EXISTS.
const FIRST_SHAPE = `
CREATE SCHEMA IF NOT EXISTS reporting;
CREATE TABLE IF NOT EXISTS reporting.applied (fact_id uuid PRIMARY KEY);
CREATE TABLE IF NOT EXISTS reporting.orders (
  order_id uuid PRIMARY KEY, tenant_id text NOT NULL, event_id uuid NOT NULL, cell_id text NOT NULL,
  status text NOT NULL, amount bigint NOT NULL, currency text NOT NULL, seats jsonb NOT NULL,
  held_at timestamptz, paid_at timestamptz, refunded bigint NOT NULL DEFAULT 0, ticketed_at timestamptz);
CREATE INDEX IF NOT EXISTS reporting_orders_event ON reporting.orders (tenant_id, event_id);
CREATE TABLE IF NOT EXISTS reporting.minutes (
  tenant_id text NOT NULL, event_id uuid NOT NULL, minute timestamptz NOT NULL,
  holds int NOT NULL DEFAULT 0, paid_orders int NOT NULL DEFAULT 0, seats_sold int NOT NULL DEFAULT 0,
  gross bigint NOT NULL DEFAULT 0, refunded bigint NOT NULL DEFAULT 0, declines int NOT NULL DEFAULT 0,
  expiries int NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, event_id, minute));
CREATE TABLE IF NOT EXISTS reporting.sections (
  tenant_id text NOT NULL, event_id uuid NOT NULL, section text NOT NULL, tier text NOT NULL,
  sold int NOT NULL DEFAULT 0, held int NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, event_id, section, tier));
CREATE TABLE IF NOT EXISTS reporting.funnel (
  tenant_id text NOT NULL, event_id uuid NOT NULL, queued bigint NOT NULL DEFAULT 0,
  admitted bigint NOT NULL DEFAULT 0, held bigint NOT NULL DEFAULT 0, paid bigint NOT NULL DEFAULT 0,
  ticketed bigint NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, event_id));`;
const REFUND_COLUMNS = `
ALTER TABLE reporting.minutes ADD COLUMN IF NOT EXISTS refunds int NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS seats_refunded int NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS cancels int NOT NULL DEFAULT 0;`;

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
    expect(await applied(db)).toBe(2);
    await migrateReporting(pool);
    expect(await shape(db)).toEqual(current);
    expect(await applied(db)).toBe(2);
  });

  it('databases made before migrations, at the first shape or the last, reach the same schema and keep their rows', async () => {
    const fresh = await database();
    await migrateReporting(fresh.pool);
    const current = await shape(fresh.db);

    for (const prelude of [FIRST_SHAPE, FIRST_SHAPE + REFUND_COLUMNS]) {
      const { db, pool } = await database(prelude);
      await migrateReporting(pool);
      expect(await shape(db)).toEqual(current);
      expect(await applied(db)).toBe(2);
      expect(
        await db.query(
          'SELECT holds, gross::int, refunds, cancels FROM reporting.minutes WHERE event_id = $1 AND minute = $2',
          [...MINUTE],
        ),
      ).toEqual([{ holds: 3, gross: 4500, refunds: 0, cancels: 0 }]);
    }
  });
});
