import { fileURLToPath } from 'node:url';
import { type DatabaseAuthConfig, ensureDatabaseUsers } from '@onsale/aws-auth';
import { parseEnv } from '@onsale/contracts';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { MigrateConfig } from '../config';
import { createDb } from './client';

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** Applies the committed drizzle-kit migrations; applying twice is a no-op. */
export async function migrateDatabase(
  url: string,
  auth?: DatabaseAuthConfig,
  users: readonly string[] = [],
): Promise<void> {
  const { db, pool } = createDb(url, 1, auth);
  try {
    await migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
    await ensureDatabaseUsers((text) => pool.query(text), users);
  } finally {
    await pool.end();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const config = parseEnv(MigrateConfig);
  await migrateDatabase(config.DATABASE_URL_CONTROL_PLANE, config, config.DATABASE_ROLE_USERS?.split(',') ?? []);
  console.log(JSON.stringify({ level: 'info', msg: 'control-plane migrations applied' }));
}
