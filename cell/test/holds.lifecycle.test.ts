import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import type { TestCell } from '../../test/support/cell';
import { cellTest } from '../../test/support/fixtures';

const it = cellTest({ seats: 30, event: { holdTtlSeconds: 120 } });

/** Moves a hold's expiry into the past, as the clock would. */
const lapse = (cell: TestCell, holdId: string) =>
  cell.db.query(`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = $1`, [holdId]);

describe('a hold over its life', () => {
  it('returns 202 with the order, its hold, the expiry and a Location', async ({ identity, cell, event }) => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const before = Date.now();
    const res = await buyer.hold([event.seats[0]!.id, event.seats[1]!.id]);
    expect(res.status).toBe(202);
    const body = await res.json();
    expect(body.status).toBe('pending_payment');
    expect(res.headers.get('location')).toBe(`/events/${event.eventId}/orders/${body.orderId}`);
    const ttl = new Date(body.expiresAt).getTime() - before;
    expect(ttl).toBeGreaterThan(110_000);
    expect(ttl).toBeLessThan(130_000);

    const outbox = await cell.db.query<{
      event_type: string;
      topic: string;
      envelope: { payload: { amount: number } };
    }>('SELECT event_type, topic, envelope FROM outbox WHERE aggregate_id = $1', [body.orderId]);
    expect(outbox.map((o) => [o.event_type, o.topic])).toEqual([['HoldCreated', `cell.${cell.cellId}.purchase`]]);
    expect(outbox[0]!.envelope.payload.amount).toBe(10_000);
  });

  it('a seat id in capitals holds that seat, as PostgreSQL reads the id', async ({ identity, cell, event }) => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const seat = event.seats[2]!.id;
    const res = await buyer.hold([seat.toUpperCase()]);
    expect(res.status).toBe(202);
    const { holdId } = await res.json();
    expect(await cell.db.query('SELECT seat_id FROM hold_seats WHERE hold_id = $1', [holdId])).toEqual([
      { seat_id: seat },
    ]);
  });

  it("an expired hold's seats can be held by another buyer, and the old order is no longer pending", async ({
    identity,
    cell,
    event,
  }) => {
    const first = await admittedBuyer(identity, cell, event.eventId);
    const seats = [event.seats[5]!.id, event.seats[6]!.id];
    const old = await (await first.hold(seats)).json();
    const second = await admittedBuyer(identity, cell, event.eventId);
    expect((await second.hold([seats[0]!])).status).toBe(409);

    await lapse(cell, old.holdId);
    const res = await second.hold([seats[0]!]);
    expect(res.status).toBe(202);

    const view = await (await first.order(old.orderId)).json();
    expect(view.status).toBe('expired');
    const [hold] = await cell.db.query('SELECT status FROM holds WHERE id = $1', [old.holdId]);
    expect(hold).toEqual({ status: 'expired' });
    // Both seats of the lapsed hold were released, not just the one asked for.
    expect(
      await cell.db.query('SELECT seat_id FROM hold_seats WHERE hold_id = $1 AND released_at IS NULL', [old.holdId]),
    ).toEqual([]);
    const expired = await cell.db.query('SELECT 1 FROM outbox WHERE aggregate_id = $1 AND event_type = $2', [
      old.orderId,
      'HoldExpired',
    ]);
    expect(expired).toHaveLength(1);
  });

  it('the owner sees the order; anyone else gets 404', async ({ identity, cell, event }) => {
    const owner = await admittedBuyer(identity, cell, event.eventId);
    const { orderId, expiresAt } = await (await owner.hold([event.seats[10]!.id])).json();
    const res = await owner.order(orderId);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      orderId,
      status: 'pending_payment',
      amount: 5_000,
      currency: 'eur',
      holdExpiresAt: expiresAt,
      seats: [{ seatId: event.seats[10]!.id, label: event.seats[10]!.label }],
      tickets: [],
      payment: null,
    });
    const stranger = await admittedBuyer(identity, cell, event.eventId);
    expect((await stranger.order(orderId)).status).toBe(404);
    expect((await owner.order(randomUUID())).status).toBe(404);
  });

  it('the owner releases an active hold, idempotently; the seats are free again', async ({ identity, cell, event }) => {
    const owner = await admittedBuyer(identity, cell, event.eventId);
    const seat = event.seats[15]!.id;
    const { orderId } = await (await owner.hold([seat])).json();
    const stranger = await admittedBuyer(identity, cell, event.eventId);
    expect((await stranger.release(orderId)).status).toBe(404);

    const [a, b] = await Promise.all([owner.release(orderId), owner.release(orderId)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect((await owner.release(orderId)).status).toBe(200);
    expect((await (await owner.order(orderId)).json()).status).toBe('released');
    const released = await cell.db.query('SELECT 1 FROM outbox WHERE aggregate_id = $1 AND event_type = $2', [
      orderId,
      'HoldReleased',
    ]);
    expect(released).toHaveLength(1);
    expect((await stranger.hold([seat])).status).toBe(202);
  });

  it('a confirmed order cannot be released by the buyer', async ({ identity, cell, event }) => {
    const owner = await admittedBuyer(identity, cell, event.eventId);
    const { orderId, holdId } = await (await owner.hold([event.seats[20]!.id])).json();
    await cell.db.query(`UPDATE holds SET status = 'confirmed' WHERE id = $1`, [holdId]);
    await cell.db.query(`UPDATE orders SET status = 'confirmed' WHERE id = $1`, [orderId]);
    const res = await owner.release(orderId);
    expect(res.status).toBe(409);
    expect((await res.json()).error.code).toBe('order_not_releasable');
  });

  it('availability is a hint that leaves out held seats', async ({ cell, event }) => {
    const res = await fetch(`${cell.url}/events/${event.eventId}/availability`);
    expect(res.status).toBe(200);
    const body = await res.json();
    const held = await cell.db.query<{ seat_id: string }>('SELECT seat_id FROM hold_seats WHERE released_at IS NULL');
    expect(body.availableCount).toBe(event.seats.length - held.length);
    for (const { seat_id } of held) expect(body.availableSeatIds).not.toContain(seat_id);
    expect((await fetch(`${cell.url}/events/${randomUUID()}/availability`)).status).toBe(404);
  });
});
