import { describe, expect } from 'vitest';
import type { TestCell } from '../../test/support/cell';
import { cellTest } from '../../test/support/fixtures';
import { eventLoad } from '../../test/support/seed';

const it = cellTest();

const put = (cell: TestCell, eventId: string, body: unknown, token = cell.internalToken) =>
  fetch(`${cell.url}/internal/events/${eventId}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const seatCount = async (cell: TestCell, eventId: string) =>
  (await cell.db.query<{ n: number }>('SELECT count(*)::int AS n FROM seats WHERE event_id = $1', [eventId]))[0]!.n;

describe('loading an event into the cell', () => {
  it('takes 100,000 seats in one call, and the same call again is a no-op', async ({ cell }) => {
    const load = eventLoad(100_000);
    const first = await put(cell, load.eventId, load);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ eventId: load.eventId, seats: 100_000, created: true });
    expect(await seatCount(cell, load.eventId)).toBe(100_000);

    const again = await put(cell, load.eventId, load);
    expect(await again.json()).toEqual({ eventId: load.eventId, seats: 100_000, created: false });
    expect(await seatCount(cell, load.eventId)).toBe(100_000);
  });

  it('refuses a different seat map for a loaded event with 409', async ({ cell }) => {
    const load = eventLoad(10);
    expect((await put(cell, load.eventId, load)).status).toBe(200);
    const changed = { ...load, seats: load.seats.map((s, i) => (i === 3 ? { ...s, price: s.price + 1 } : s)) };
    const res = await put(cell, load.eventId, changed);
    expect(res.status).toBe(409);
    expect((await res.json()).error.code).toBe('event_conflict');
  });

  it('rejects a bad row naming it, and stores nothing of the map', async ({ cell }) => {
    const load = eventLoad(1_000);
    const badPrice = { ...load, seats: load.seats.map((s, i) => (i === 777 ? { ...s, price: -5 } : s)) };
    const res = await put(cell, load.eventId, badPrice);
    expect(res.status).toBe(400);
    expect((await res.json()).error.details.issues[0].path).toBe('seats.777.price');

    const dupLabel = {
      ...load,
      seats: load.seats.map((s, i) => (i === 901 ? { ...s, label: load.seats[12]!.label } : s)),
    };
    const dup = await put(cell, load.eventId, dupLabel);
    expect(dup.status).toBe(400);
    expect((await dup.json()).error.details.issues).toEqual([
      { path: 'seats.901.label', message: 'duplicate of row 12' },
    ]);
    expect(await seatCount(cell, load.eventId)).toBe(0);
    expect(await cell.db.query('SELECT 1 FROM events WHERE id = $1', [load.eventId])).toEqual([]);
  });

  it('requires the internal token', async ({ cell }) => {
    const load = eventLoad(1);
    expect((await put(cell, load.eventId, load, 'wrong-token-wrong-token')).status).toBe(401);
    expect(await cell.db.query('SELECT 1 FROM events WHERE id = $1', [load.eventId])).toEqual([]);
  });
});
