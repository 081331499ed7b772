import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { createDb } from './client';

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** Applies the committed drizzle-kit migrations; applying twice is a no-op. */
export async function migrateDatabase(url: string): Promise<void> {
  const { db, pool } = createDb(url, 1);
  try {
    await migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await pool.end();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const url = process.env.DATABASE_URL_CONTROL_PLANE;
  if (!url) {
    console.error('DATABASE_URL_CONTROL_PLANE is required');
    process.exit(1);
  }
  await migrateDatabase(url);
  console.log(JSON.stringify({ level: 'info', msg: 'control-plane migrations applied' }));
}
