import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import type pg from 'pg';

/**
 * The live projections' migrations (their own schema, `reporting`, in the control plane's database). The path
 * is the same from this file and from every bundle that runs it, `<package>/dist/bin/*.mjs`: the reporting
 * consumer's and the control plane's (its sales reads migrate before the consumer first ran).
 */
export const REPORTING_MIGRATIONS = fileURLToPath(new URL('../../../reporting/drizzle', import.meta.url));

/**
 * Applies the committed migrations (twice is a no-op), recorded in reporting.__migrations: the control
 * plane's own migrations keep drizzle's default table in the same database.
 */
export async function migrateReporting(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    // One migrator at a time (the consumer, a rebuild, the control plane's first sales read): the migrator
    // reads the last applied migration before its transaction, so two at once would both apply the next.
    await client.query('SELECT pg_advisory_lock(hashtext($1))', ['reporting.migrate']);
    await migrate(drizzle(client), {
      migrationsFolder: REPORTING_MIGRATIONS,
      migrationsSchema: 'reporting',
      migrationsTable: '__migrations',
    });
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', ['reporting.migrate']).catch(() => {});
    client.release();
  }
}
