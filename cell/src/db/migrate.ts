import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DatabaseAuthConfig, ensureDatabaseUsers } from '@onsale/aws-auth';
import { sql } from 'drizzle-orm';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { openDatabase } from './client';

const migrationsFolder = resolve(dirname(fileURLToPath(import.meta.url)), '../../drizzle');

/**
 * Applies the committed migrations (twice is a no-op) and registers the cell's epoch row. A higher epoch
 * than the row's fences the writers of the old one (a region promotion); a lower one changes nothing.
 */
export async function migrateCell(
  url: string,
  cellId: string,
  epoch = 1,
  auth?: DatabaseAuthConfig,
  users: readonly string[] = [],
): Promise<void> {
  const database = openDatabase(url, 1, 'cell-migrate', auth);
  try {
    await migrate(database.db, { migrationsFolder });
    await database.db.execute(
      sql`INSERT INTO cell_epoch (cell_id, epoch) VALUES (${cellId}, ${epoch}) ON CONFLICT (cell_id) DO UPDATE SET epoch = GREATEST(cell_epoch.epoch, EXCLUDED.epoch)`,
    );
    await ensureDatabaseUsers((text) => database.pool.query(text), users);
  } finally {
    await database.close();
  }
}
