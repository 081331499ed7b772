import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../test/support/db';
import { createDb } from '../src/db/client';

/**
 * The control plane's pool outlives its connections: pg emits a lost connection as an 'error' event on the
 * client, and one nobody listens to ends the process (the drills saw the API exit when its database went).
 */
describe('a lost database connection', () => {
  it('fails the statement in flight, not the process: idle and checked-out clients alike, and the next query reconnects', async () => {
    const database = await createTestDatabase('cp_loss');
    const { pool } = createDb(database.url, 4);
    try {
      const idle = await pool.connect();
      idle.release();
      const held = await pool.connect(); // checked out between two statements of a transaction
      await held.query('BEGIN');
      const pids = (
        await pool.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        )
      ).rows;
      await database.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids.map((p) => p.pid)]);
      await new Promise((r) => setTimeout(r, 300)); // the 'error' events arrive while nothing is in flight
      await expect(held.query('SELECT 1')).rejects.toThrow();
      held.release(true);
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1);
    } finally {
      await pool.end();
      await database.drop();
    }
  });
});
