import { randomUUID } from 'node:crypto';
import { metrics } from '@onsale/contracts';
import { describe, expect } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { cellTest } from '../../test/support/fixtures';

const it = cellTest({ seats: 200 });

describe('racing for seats', () => {
  it('100 concurrent attempts on one seat make exactly one hold', async ({ identity, cell, event }) => {
    const seat = event.seats[0]!.id;
    const buyers = await Promise.all(Array.from({ length: 100 }, () => admittedBuyer(identity, cell, event.eventId)));
    const sent = Date.now();
    const responses = await Promise.all(buyers.map((b) => b.hold([seat])));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(99);

    const losers = await Promise.all(responses.filter((r) => r.status === 409).map((r) => r.json()));
    for (const body of losers) {
      expect(body.error.code).toBe('seats_unavailable');
      expect(body.error.details.seatIds).toEqual([seat]);
      // When the refusal was decided: a seat map waits for an availability document at least this recent.
      expect(Date.parse(body.error.details.checkedAt)).toBeGreaterThanOrEqual(sent);
    }
    const active = await cell.db.query('SELECT hold_id FROM hold_seats WHERE seat_id = $1 AND released_at IS NULL', [
      seat,
    ]);
    expect(active).toHaveLength(1);
    expect(await cell.db.query('SELECT id FROM orders')).toHaveLength(1);
  });

  it('50 buyers with overlapping multi-seat requests: no 5xx, no seat in two active holds', async ({
    identity,
    cell,
    event,
  }) => {
    // 12 seats, each buyer asks for 3 to 6 of them in a random order: heavy overlap both ways.
    const pool = event.seats.slice(10, 22).map((s) => s.id);
    const buyers = await Promise.all(Array.from({ length: 50 }, () => admittedBuyer(identity, cell, event.eventId)));
    const responses = await Promise.all(
      buyers.map((b) => {
        const wanted = [...pool].sort(() => Math.random() - 0.5).slice(0, 3 + Math.floor(Math.random() * 4));
        return b.hold(wanted);
      }),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 202 || s === 409)).toBe(true);
    expect(statuses).toContain(202);

    const doubled = await cell.db.query(`
      SELECT seat_id, count(*) FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id
       WHERE hs.released_at IS NULL AND h.status = 'active' GROUP BY seat_id HAVING count(*) > 1`);
    expect(doubled).toEqual([]);
    // Every 202 owns all its seats; every held seat belongs to a 202.
    const won = await Promise.all(responses.filter((r) => r.status === 202).map((r) => r.json()));
    const heldRows = await cell.db.query<{ seat_id: string; order_id: string }>(
      `SELECT hs.seat_id, h.order_id FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id
        WHERE hs.released_at IS NULL AND hs.seat_id = ANY($1::uuid[])`,
      [pool],
    );
    expect(new Set(heldRows.map((r) => r.order_id))).toEqual(new Set(won.map((w) => w.orderId)));
  });

  it('the database refuses a second active hold on a seat even if the code did not', async ({
    identity,
    cell,
    event,
  }) => {
    const seat = event.seats[50]!.id;
    const b = await admittedBuyer(identity, cell, event.eventId);
    const res = await b.hold([seat]);
    expect(res.status).toBe(202);
    const { holdId } = await res.json();
    const other = await cell.db.query<{ id: string }>('SELECT id FROM holds WHERE id <> $1 LIMIT 1', [holdId]);
    await expect(
      cell.db.query('INSERT INTO hold_seats (hold_id, seat_id) VALUES ($1, $2)', [other[0]!.id, seat]),
    ).rejects.toThrow(/hold_seats_one_active_per_seat/);
    await expect(
      cell.db.query(
        `INSERT INTO tickets (id, order_id, event_id, seat_id, user_id, token)
         SELECT 'tkt_a', o.id, o.event_id, $1, o.user_id, 'x' FROM orders o LIMIT 1`,
        [seat],
      ),
    ).resolves.toBeDefined();
    await expect(
      cell.db.query(
        `INSERT INTO tickets (id, order_id, event_id, seat_id, user_id, token)
         SELECT 'tkt_b', o.id, o.event_id, $1, o.user_id, 'x' FROM orders o LIMIT 1`,
        [seat],
      ),
    ).rejects.toThrow(/tickets_seat_uq/);
  });

  it('an unknown seat is named, an unknown event is a 404, and nothing is written', async ({
    identity,
    cell,
    event,
  }) => {
    const b = await admittedBuyer(identity, cell, event.eventId);
    const before = await cell.db.query('SELECT count(*)::int AS n FROM orders');
    const ghost = randomUUID();
    const res = await b.hold([event.seats[100]!.id, ghost]);
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatchObject({ code: 'seats_not_found', details: { seatIds: [ghost] } });
    expect(await cell.db.query('SELECT count(*)::int AS n FROM orders')).toEqual(before);

    const refusedUnknown = async () =>
      (await metrics.holdsRefused.get()).values
        .filter((v) => v.labels.event === 'unknown')
        .reduce((n, v) => n + v.value, 0);
    const unknownBefore = await refusedUnknown();
    const nowhere = randomUUID();
    const elsewhere = await admittedBuyer(identity, cell, nowhere);
    const unknown = await elsewhere.hold([event.seats[100]!.id]);
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe('not_found');
    // The refusal is counted, under 'unknown': an id the client made up never becomes a metric label.
    expect(await refusedUnknown()).toBe(unknownBefore + 1);
    expect((await metrics.holdsRefused.get()).values.some((v) => v.labels.event === nowhere)).toBe(false);
    expect(await cell.db.query('SELECT count(*)::int AS n FROM orders')).toEqual(before);
  });
});
