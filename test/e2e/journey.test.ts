import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { type Shopper, shopper } from '../support/shopper';

let t: TestPlatform;
const SEATS = 60;

beforeAll(async () => {
  t = await startTestPlatform({ seatsPerEvent: SEATS, maxReleaseRate: 50 });
});
afterAll(async () => {
  await t?.stop();
});

async function availableSeats(eventId: string): Promise<string[]> {
  const res = await fetch(`${t.platform.urls.router}/events/${eventId}/availability`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { availableSeatIds: string[] }).availableSeatIds;
}

async function ticketsPerSeat(cellId: string) {
  return t
    .cellDb(cellId)
    .query<{ seat_id: string; n: number }>('SELECT seat_id, count(*)::int AS n FROM tickets GROUP BY seat_id');
}

describe('a buyer journey through the edge router, on two cells', () => {
  it('the promoter placed one event on each cell, and the scheduler loaded each into its running cell', async () => {
    expect(t.demo.events.map((e) => e.cellId)).toEqual(t.platform.cells.map((c) => c.id));
    for (const e of t.demo.events) {
      const [loaded] = await t
        .cellDb(e.cellId)
        .query<{ seat_count: number }>('SELECT seat_count FROM events WHERE id = $1', [e.eventId]);
      expect(loaded!.seat_count).toBe(SEATS);
    }
  });

  it('queue, admission, hold, pay, tickets; a declined card ends failed with its seats back on sale', async () => {
    for (const event of t.demo.events) {
      const seats = await availableSeats(event.eventId);
      const buyers: Shopper[] = await Promise.all(
        Array.from({ length: 6 }, (_, i) => shopper(t.platform, event.eventId, `fan-${event.cellId}-${i}`)),
      );
      await Promise.all(buyers.map((b) => b.admit()));
      for (const b of buyers) expect(b.admission!.purchaseCell).toBe(event.cellId);

      const orders = await Promise.all(
        buyers.map(async (b, i) => {
          const res = await b.hold(seats.slice(i * 2, i * 2 + 2), randomUUID());
          expect(res.status).toBe(202);
          return ((await res.json()) as { orderId: string }).orderId;
        }),
      );
      const cards = buyers.map((_, i): 'pm_card_visa' | 'pm_card_chargeDeclined' =>
        i < 4 ? 'pm_card_visa' : 'pm_card_chargeDeclined',
      );
      await Promise.all(buyers.map((b, i) => b.pay(orders[i]!, cards[i]!)));

      const finals = await Promise.all(buyers.map((b, i) => b.until(orders[i]!, ['ticketed', 'failed'])));
      finals.forEach((view, i) => {
        if (cards[i] === 'pm_card_visa') {
          expect(view.status).toBe('ticketed');
          expect(view.tickets).toHaveLength(2);
        } else {
          expect(view.status).toBe('failed');
          expect(view.tickets).toHaveLength(0);
        }
      });
      // The declined buyers' seats are on sale again.
      const again = await availableSeats(event.eventId);
      for (const seat of seats.slice(8, 12)) expect(again).toContain(seat);
      for (const seat of seats.slice(0, 8)) expect(again).not.toContain(seat);

      const db = t.cellDb(event.cellId);
      const [confirmed] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id WHERE h.status = 'confirmed' AND hs.released_at IS NULL`,
      );
      const perSeat = await ticketsPerSeat(event.cellId);
      expect(perSeat.length).toBe(confirmed!.n);
      expect(perSeat.every((r) => r.n === 1)).toBe(true);
    }
  });

  it("a token for one cell presented for the other cell's event is refused, nothing written", async () => {
    const [a, b] = t.demo.events;
    const buyer = await shopper(t.platform, a!.eventId, 'fan-crossing');
    await buyer.admit();
    const target = (await availableSeats(b!.eventId))[0]!;
    const before = await t.cellDb(b!.cellId).query('SELECT id FROM orders');
    const res = await fetch(`${t.platform.urls.router}/events/${b!.eventId}/holds`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${buyer.bearer}`,
        'x-admission-token': buyer.admission!.token,
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ seatIds: [target] }),
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('admission_invalid');
    expect(await t.cellDb(b!.cellId).query('SELECT id FROM orders')).toEqual(before);
    expect(await t.cellDb(a!.cellId).query('SELECT 1 FROM hold_seats WHERE seat_id = $1', [target])).toEqual([]);
  });
});
