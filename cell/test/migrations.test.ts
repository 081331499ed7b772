import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db';
import { migrateCell } from '../src/db/migrate';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('cell_migrate');
});
afterAll(async () => {
  await db?.drop();
});

const schema = () =>
  db.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2`,
  );

describe('cell migrations', () => {
  it('apply with one call, and a second call changes nothing', async () => {
    await migrateCell(db.url, 'cell-m', 1);
    const first = await schema();
    expect(new Set(first.map((c) => c.table_name))).toEqual(
      new Set([
        'cell_epoch',
        'events',
        'seats',
        'orders',
        'holds',
        'hold_seats',
        'payments',
        'tickets',
        'idempotency_keys',
        'outbox',
        'relay_leases',
        'inbox',
        'stripe_events',
        'incidents',
        'buyer_limits',
        'price_tiers',
        'ga_areas',
        'ga_stripes',
        'hold_ga_units',
        'notifications',
      ]),
    );
    await migrateCell(db.url, 'cell-m', 1);
    expect(await schema()).toEqual(first);
    expect(await db.query('SELECT cell_id, epoch::int FROM cell_epoch')).toEqual([{ cell_id: 'cell-m', epoch: 1 }]);
  });

  it('installs the last guards as unique indexes', async () => {
    const indexes = await db.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE indexname IN ('hold_seats_one_active_per_seat', 'tickets_seat_uq')`,
    );
    const byName = Object.fromEntries(indexes.map((i) => [i.indexname, i.indexdef]));
    expect(byName.hold_seats_one_active_per_seat).toMatch(/UNIQUE INDEX .* \(seat_id\) WHERE \(released_at IS NULL\)/);
    expect(byName.tickets_seat_uq).toMatch(/UNIQUE INDEX .* \(seat_id\)/);
  });
});
