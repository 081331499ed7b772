import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownServers } from '../support/own-servers';

/**
 * What `scripts/services freeze|kill` does to a PostgreSQL server is what the drills and an SRE take it to do: a
 * frozen server answers nothing, not even on the connections its clients' pools already hold (stopping the postmaster
 * alone only refuses new connections, while a pool's go on committing), and a killed one takes its backends with it.
 * The server is this file's own (test/support/own-servers.ts), so nothing beside it is frozen.
 */
const own = ownServers('services-faults', { postgres: 18632 });
const url = `${own.postgresUrl}/postgres`;
const answered = (client: pg.Client, withinMs: number) =>
  Promise.race([
    client.query('SELECT 1 AS one').then((r) => r.rows[0].one as number),
    new Promise<'no answer'>((r) => setTimeout(() => r('no answer'), withinMs)),
  ]);

beforeAll(async () => {
  await own.services('start', 'postgres', 'cp');
}, 240_000);
afterAll(() => own.remove(), 120_000);

describe('scripts/services fails a PostgreSQL server whole', () => {
  it('freeze: an open connection gets no answer and a new one is not accepted; thaw: both go on', async () => {
    const open = new pg.Client({ connectionString: url });
    await open.connect();
    try {
      expect(await answered(open, 5_000)).toBe(1);
      await own.services('freeze', 'postgres', 'cp');
      const pending = open.query('SELECT 2 AS two');
      expect(await answered(open, 1_500)).toBe('no answer');
      const fresh = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_500 });
      await expect(fresh.connect()).rejects.toThrow(/timeout/i);
      await own.services('thaw', 'postgres', 'cp');
      expect((await pending).rows[0].two).toBe(2);
      expect(await answered(open, 5_000)).toBe(1);
    } finally {
      await own.services('thaw', 'postgres', 'cp').catch(() => {});
      await open.end().catch(() => {});
    }
  });

  it('kill: the open connection is cut, not left talking to an orphaned backend', async () => {
    const open = new pg.Client({ connectionString: url });
    open.on('error', () => {});
    await open.connect();
    expect(await answered(open, 5_000)).toBe(1);
    await own.services('kill', 'postgres', 'cp');
    await expect(open.query('SELECT 1')).rejects.toThrow();
    await open.end().catch(() => {});
  });
});
