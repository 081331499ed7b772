import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { openDatabase } from './client';

const migrationsFolder = resolve(dirname(fileURLToPath(import.meta.url)), '../../drizzle');

/** Applies the committed migrations (twice is a no-op) and registers the cell's epoch row. */
export async function migrateCell(url: string, cellId: string, epoch = 1): Promise<void> {
  const database = openDatabase(url, 1, 'cell-migrate');
  try {
    await migrate(database.db, { migrationsFolder });
    await database.db.execute(
      sql`INSERT INTO cell_epoch (cell_id, epoch) VALUES (${cellId}, ${epoch}) ON CONFLICT (cell_id) DO NOTHING`,
    );
  } finally {
    await database.close();
  }
}
