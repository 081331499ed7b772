import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db';
import {
  CELL_FUNCTION_FOLDERS,
  type FunctionFolders,
  functionDrift,
  functionSources,
  readJournal,
  writeFunctionMigration,
} from '../src/db/functions';

const body = (source: string) => /AS \$\$([\s\S]*)\$\$/.exec(source)![1];

async function applyMigrations(url: string, migrationsFolder: string) {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await migrate(drizzle(pool), { migrationsFolder });
  } finally {
    await pool.end();
  }
}

const installed = (db: TestDatabase) =>
  db.query<{ proname: string; prosrc: string; args: string }>(
    `SELECT p.proname, p.prosrc, pg_get_function_arguments(p.oid) AS args
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND p.prokind = 'f' ORDER BY p.proname, args`,
  );

describe('the cell SQL functions as source files', () => {
  it('every function file is what the migrations install last (and nothing else is installed)', () => {
    expect(
      functionDrift(),
      'a function file changed: `pnpm --filter @onsale/cell db:generate` writes its migration',
    ).toEqual([]);
  });

  it('journal entries are in time order: the migrator skips an entry not newer than the last applied one', () => {
    const whens = readJournal(CELL_FUNCTION_FOLDERS.migrations).map((e) => e.when);
    for (let i = 1; i < whens.length; i++) expect(whens[i]).toBeGreaterThan(whens[i - 1]!);
  });

  describe('against PostgreSQL', () => {
    let migrated: TestDatabase;
    beforeAll(async () => {
      migrated = await createTestDatabase('cell_fn', 'cell');
    });
    afterAll(async () => {
      await migrated?.drop();
    });

    it('a migrated database holds exactly the files’ functions, with their bodies', async () => {
      const sources = functionSources(CELL_FUNCTION_FOLDERS.functions);
      const functions = await installed(migrated);
      expect(functions.map((f) => f.proname)).toEqual([...sources.keys()]);
      for (const f of functions) expect(f.prosrc).toBe(body(sources.get(f.proname)!.source));
    });
  });

  describe('a changed function file', () => {
    let work: string;
    let folders: FunctionFolders;
    const dbs: TestDatabase[] = [];
    beforeAll(() => {
      work = mkdtempSync(resolve(tmpdir(), 'cell-functions-'));
      folders = { migrations: resolve(work, 'drizzle'), functions: resolve(work, 'functions') };
      cpSync(CELL_FUNCTION_FOLDERS.migrations, folders.migrations, { recursive: true });
      cpSync(CELL_FUNCTION_FOLDERS.functions, folders.functions, { recursive: true });
    });
    afterAll(async () => {
      rmSync(work, { recursive: true, force: true });
      await Promise.all(dbs.map((d) => d.drop()));
    });

    it('is drift until db:generate writes its migration, which old and fresh databases both apply', async () => {
      const file = resolve(folders.functions, 'seat_price.sql');
      writeFileSync(file, readFileSync(file, 'utf8').replace('coalesce(tier_price', 'coalesce(1 + tier_price'));
      expect(functionDrift(folders)).toMatchObject([{ name: 'seat_price', change: 'changed' }]);
      expect(functionDrift(folders)[0]).not.toHaveProperty('drop');

      const old = await createTestDatabase('cell_fn_old', 'cell');
      dbs.push(old);
      const next = String(
        (JSON.parse(readFileSync(resolve(folders.migrations, 'meta/_journal.json'), 'utf8')) as { entries: unknown[] })
          .entries.length,
      ).padStart(4, '0');
      const tag = writeFunctionMigration(folders)!;
      // The next migration after the committed ones, named for the function it installs.
      expect(tag).toBe(`${next}_seat_price`);
      expect(functionDrift(folders)).toEqual([]);
      const migration = readFileSync(resolve(folders.migrations, `${tag}.sql`), 'utf8');
      expect(migration).toContain('CREATE OR REPLACE FUNCTION seat_price(');
      expect(migration).not.toContain('hold_open');

      const fresh = await createTestDatabase('cell_fn_fresh');
      dbs.push(fresh);
      await applyMigrations(old.url, folders.migrations);
      await applyMigrations(fresh.url, folders.migrations);
      for (const db of [old, fresh])
        expect(await db.query('SELECT seat_price(100, 20, false, NULL) AS p')).toEqual([{ p: 121 }]);
      // The migrations the test started from are untouched: the committed set still installs the old rule.
      expect(functionDrift()).toEqual([]);
    });

    it('a new signature drops the old function first, and a deleted file drops its function', async () => {
      const file = resolve(folders.functions, 'writer_fence.sql');
      writeFileSync(file, readFileSync(file, 'utf8').replace('p_epoch bigint)', 'p_epoch bigint, p_strict boolean)'));
      unlinkSync(resolve(folders.functions, 'seat_price.sql'));
      expect(functionDrift(folders)).toMatchObject([
        { name: 'seat_price', change: 'removed' },
        { name: 'writer_fence', change: 'changed', drop: { signature: { args: 'p_cell_id text, p_epoch bigint' } } },
      ]);
      const tag = writeFunctionMigration(folders)!;
      const migration = readFileSync(resolve(folders.migrations, `${tag}.sql`), 'utf8');
      expect(migration.indexOf('DROP FUNCTION writer_fence(p_cell_id text, p_epoch bigint);')).toBeLessThan(
        migration.indexOf('CREATE OR REPLACE FUNCTION writer_fence('),
      );
      expect(migration).toContain('DROP FUNCTION seat_price(');

      const db = dbs[0]!;
      await applyMigrations(db.url, folders.migrations);
      expect((await installed(db)).map((f) => `${f.proname}(${f.args})`)).toEqual([
        'hold_open(p_cell_id text, p_epoch bigint, p_user_id text, p_key text, p_request_hash text, p_event_id uuid, p_seat_ids uuid[])',
        'relay_claim(p_cell_id text, p_epoch bigint, p_lock bigint, p_owner text, p_limit integer, p_lease_ms integer)',
        'writer_fence(p_cell_id text, p_epoch bigint, p_strict boolean)',
      ]);
    });
  });
});
