import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { migrateCell } from '@onsale/cell/db/migrate';
import { MIGRATIONS_FOLDER as CONTROL_PLANE_MIGRATIONS, migrateDatabase } from '@onsale/control-plane/db/migrate';
import pg from 'pg';
import { repoRoot, serviceEnv } from './services';

export interface TestDatabase {
  name: string;
  url: string;
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

/** Which schema a test database starts with: none, or every committed migration of a service. */
export type Schema = 'empty' | 'cell' | 'control-plane';

const schemas = {
  cell: {
    folder: resolve(repoRoot, 'cell/drizzle'),
    // The epoch row belongs to each cell id: registered per clone, not baked into the template.
    migrate: async (url: string) => {
      await migrateCell(url, 'template', 1);
      await withClient(url, (c) => c.query('DELETE FROM cell_epoch'));
    },
  },
  'control-plane': { folder: CONTROL_PLANE_MIGRATIONS, migrate: (url: string) => migrateDatabase(url) },
} as const;

/** A PostgreSQL server: the control plane's (ONSALE_PG_URL, every test's default) or a cell's own. */
const defaultServer = () => serviceEnv().ONSALE_PG_URL!;
const adminUrl = (server: string) => `${server}/postgres`;

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** The template's name changes with the migrations' contents, so a new migration makes a new template. */
function templateName(schema: Exclude<Schema, 'empty'>): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = resolve(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else hash.update(entry.name).update(readFileSync(path));
    }
  };
  walk(schemas[schema].folder);
  return `tpl_${schema.replace('-', '_')}_${hash.digest('hex').slice(0, 12)}`;
}

/** Migrates a template once per migration set; an advisory lock keeps concurrent test processes from racing. */
async function ensureTemplate(schema: Exclude<Schema, 'empty'>, server: string): Promise<string> {
  const name = templateName(schema);
  await withClient(adminUrl(server), async (admin) => {
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    try {
      const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (exists.rowCount) return;
      const building = `${name}_build_${randomBytes(3).toString('hex')}`;
      await admin.query(`CREATE DATABASE ${building}`);
      await schemas[schema].migrate(`${server}/${building}`);
      // Renamed only once complete: a crash mid-migration never leaves a half-built template behind.
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    }
  });
  return name;
}

/**
 * A database of its own for one test file on the real PostgreSQL (the control plane's server, or `server`): empty,
 * or cloned from a template that already holds every migration of `schema` (a file copy instead of replaying
 * the migrations for each file).
 */
export async function createTestDatabase(
  prefix: string,
  schema: Schema = 'empty',
  server = defaultServer(),
): Promise<TestDatabase> {
  const base = server;
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const template = schema === 'empty' ? null : await ensureTemplate(schema, server);
  await withClient(adminUrl(server), (admin) =>
    admin.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`),
  );
  const url = `${base}/${name}`;
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  // An idle connection the server dropped (a drill kills the server) is discarded by the pool, not a crash of the run.
  pool.on('error', () => {});
  return {
    name,
    url,
    query: async (text, values) => (await pool.query(text, values as unknown[])).rows,
    async drop() {
      await pool.end();
      await withClient(adminUrl(server), async (c) => {
        // pg-pool's end() resolves before its clients' sockets close: a FORCE drop that terminated
        // one still closing would surface as an uncaught 57P01 in the test process. Give them 2 s.
        for (let i = 0; i < 100; i++) {
          const left = await c.query('SELECT 1 FROM pg_stat_activity WHERE datname = $1 LIMIT 1', [name]);
          if (left.rowCount === 0) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    },
  };
}
