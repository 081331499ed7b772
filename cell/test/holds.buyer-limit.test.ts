import type { EventLoad } from '@onsale/contracts';
import { describe, expect } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import type { TestCell } from '../../test/support/cell';
import { cellTest } from '../../test/support/fixtures';

const it = cellTest({ seats: 300, event: { maxSeatsPerOrder: 4 } });

const seatIds = (event: EventLoad, from: number, n: number) => event.seats.slice(from, from + n).map((s) => s.id);

async function seatsHeldBy(cell: TestCell, event: EventLoad, userId: string): Promise<number> {
  const rows = await cell.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id
      WHERE h.user_id = $1 AND h.event_id = $2 AND hs.released_at IS NULL`,
    [userId, event.eventId],
  );
  return rows[0]!.n;
}

describe('the per-buyer limit holds across orders', () => {
  it('a second order that would pass the limit is refused with a 409 naming the limit', async ({
    identity,
    cell,
    event,
  }) => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    expect((await buyer.hold(seatIds(event, 0, 3))).status).toBe(202);
    const res = await buyer.hold(seatIds(event, 3, 2));
    expect(res.status).toBe(409);
    const body = await res.json();
    expect(body.error.code).toBe('buyer_limit_exceeded');
    expect(body.error.message).toContain('4 seats per buyer');
    expect(body.error.details).toEqual({ limit: 4, held: 3, requested: 2, remaining: 1 });
    expect((await buyer.hold(seatIds(event, 3, 1))).status).toBe(202);
    expect(await seatsHeldBy(cell, event, buyer.userId)).toBe(4);
  });

  it('released and lapsed holds give their seats back to the buyer allowance', async ({ identity, cell, event }) => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const first = await (await buyer.hold(seatIds(event, 10, 4))).json();
    expect((await buyer.hold(seatIds(event, 14, 1))).status).toBe(409);
    expect((await buyer.release(first.orderId)).status).toBeLessThan(300);
    const second = await (await buyer.hold(seatIds(event, 14, 4))).json();
    await cell.db.query(`UPDATE holds SET expires_at = now() - interval '1 second' WHERE order_id = $1`, [
      second.orderId,
    ]);
    expect((await buyer.hold(seatIds(event, 20, 4))).status).toBe(202);
  });

  it('paid orders count toward the limit', async ({ identity, cell, event }) => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const { orderId } = await (await buyer.hold(seatIds(event, 30, 2))).json();
    await cell.db.query(`UPDATE holds SET status = 'confirmed' WHERE order_id = $1`, [orderId]);
    await cell.db.query(`UPDATE orders SET status = 'paid' WHERE id = $1`, [orderId]);
    const res = await buyer.hold(seatIds(event, 32, 3));
    expect(res.status).toBe(409);
    expect((await res.json()).error.details).toMatchObject({ limit: 4, held: 2, requested: 3 });
  });

  it('parallel holds by one buyer never together pass the limit', async ({ identity, cell, event }) => {
    for (let round = 0; round < 3; round++) {
      const buyer = await admittedBuyer(identity, cell, event.eventId);
      // 12 disjoint requests of 1 to 3 seats at once: only requests summing to at most 4 may win.
      const base = 100 + round * 40;
      const sizes = [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3];
      let at = base;
      const requests = sizes.map((n) => {
        const ids = seatIds(event, at, n);
        at += n;
        return ids;
      });
      const responses = await Promise.all(requests.map((ids) => buyer.hold(ids)));
      const statuses = responses.map((r) => r.status);
      expect(statuses.every((s) => s === 202 || s === 409)).toBe(true);
      const won = requests.filter((_, i) => statuses[i] === 202);
      expect(won.length).toBeGreaterThan(0);
      expect(won.reduce((n, ids) => n + ids.length, 0)).toBeLessThanOrEqual(4);
      expect(await seatsHeldBy(cell, event, buyer.userId)).toBeLessThanOrEqual(4);
      for (const r of responses.filter((x) => x.status === 409)) {
        expect((await r.json()).error.code).toBe('buyer_limit_exceeded');
      }
    }
  });

  it('other buyers are not limited by one buyer', async ({ identity, cell, event }) => {
    const buyers = await Promise.all(Array.from({ length: 10 }, () => admittedBuyer(identity, cell, event.eventId)));
    const responses = await Promise.all(buyers.map((b, i) => b.hold(seatIds(event, 250 + i * 4, 4))));
    // A refusal fails the test with its body, which says why.
    const outcomes = await Promise.all(
      responses.map(async (r) => (r.status === 202 ? 202 : `${r.status} ${await r.text()}`)),
    );
    expect(outcomes).toEqual(Array(10).fill(202));
  });
});
