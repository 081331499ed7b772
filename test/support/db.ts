import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { serviceEnv } from './services';

export interface TestDatabase {
  name: string;
  url: string;
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

/** A fresh, empty database on the real PostgreSQL, for one test file. */
export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const base = serviceEnv().ONSALE_PG_URL!;
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = `${base}/${name}`;
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  return {
    name,
    url,
    query: async (text, values) => (await pool.query(text, values as unknown[])).rows,
    async drop() {
      await pool.end();
      const c = new pg.Client({ connectionString: `${base}/postgres` });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
