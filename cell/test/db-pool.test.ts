import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db';
import { type Database, openDatabase } from '../src/db/client';

let db: TestDatabase;
const opened: Database[] = [];
beforeAll(async () => {
  db = await createTestDatabase('cell_pool');
});
afterAll(async () => {
  await Promise.all(opened.map((d) => d.close()));
  await db?.drop();
});

/** Four queries at once, each on a connection of its own (pg_sleep keeps them overlapping): their backends' pids. */
async function backends(database: Database): Promise<number[]> {
  const rows = await Promise.all(
    Array.from({ length: 4 }, () =>
      database.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid FROM pg_sleep(0.1)'),
    ),
  );
  return rows.map((r) => r.rows[0]!.pid).sort();
}

describe('the cell database pool', () => {
  it('keeps the API pool connections through a quiet spell, where a default pool closes them', async () => {
    const warm = openDatabase(db.url, 4, 'pool-test-warm', undefined, { keepIdleConnections: true });
    const cold = openDatabase(db.url, 4, 'pool-test-cold');
    opened.push(warm, cold);
    const [warmBefore, coldBefore] = await Promise.all([backends(warm), backends(cold)]);
    expect(new Set(warmBefore).size).toBe(4);

    // Longer than pg-pool's default idle timeout (10 s).
    await new Promise((r) => setTimeout(r, 11_000));
    expect(warm.pool.totalCount).toBe(4);
    expect(cold.pool.totalCount).toBe(0);

    // The same four backends answer again: nothing was reconnected.
    expect(await backends(warm)).toEqual(warmBefore);
    expect(await backends(cold)).not.toEqual(coldBefore);
  }, 30_000);
});
