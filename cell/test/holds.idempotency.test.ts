import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import type { TestCell } from '../../test/support/cell';
import { cellTest } from '../../test/support/fixtures';

const it = cellTest({ seats: 50 });

const count = async (cell: TestCell, table: string) =>
  (await cell.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;

describe('Idempotency-Key', () => {
  it('the same key sent twice concurrently makes one order, and both answers carry it', async ({
    identity,
    cell,
    event,
  }) => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const key = randomUUID();
    const seats = [event.seats[0]!.id, event.seats[1]!.id];
    const [a, b] = await Promise.all([buyer.hold(seats, key), buyer.hold(seats, key)]);
    expect([a.status, b.status]).toEqual([202, 202]);
    const [bodyA, bodyB] = [await a.json(), await b.json()];
    expect(bodyA.orderId).toBe(bodyB.orderId);
    expect(bodyA).toEqual(bodyB);
    expect([a.headers.get('idempotent-replayed'), b.headers.get('idempotent-replayed')].sort()).toEqual([null, 'true']);
    const orders = await cell.db.query('SELECT id FROM orders WHERE user_id = $1', [buyer.userId]);
    expect(orders).toEqual([{ id: bodyA.orderId }]);
  });

  it('ten concurrent retries with one key make one order and one HoldCreated', async ({ identity, cell, event }) => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const key = randomUUID();
    const responses = await Promise.all(Array.from({ length: 10 }, () => buyer.hold([event.seats[5]!.id], key)));
    const bodies = await Promise.all(responses.map((r) => r.json()));
    expect(new Set(bodies.map((b) => b.orderId)).size).toBe(1);
    expect(responses.every((r) => r.status === 202)).toBe(true);
    const events = await cell.db.query(
      `SELECT event_id FROM outbox WHERE aggregate_id = $1 AND event_type = 'HoldCreated'`,
      [bodies[0].orderId],
    );
    expect(events).toHaveLength(1);
  });

  it('the same key with another body is a 409 and writes nothing', async ({ identity, cell, event }) => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const key = randomUUID();
    expect((await buyer.hold([event.seats[10]!.id], key)).status).toBe(202);
    const before = {
      orders: await count(cell, 'orders'),
      holds: await count(cell, 'hold_seats'),
      outbox: await count(cell, 'outbox'),
    };
    const res = await buyer.hold([event.seats[11]!.id], key);
    expect(res.status).toBe(409);
    expect((await res.json()).error.code).toBe('idempotency_key_reused');
    expect({
      orders: await count(cell, 'orders'),
      holds: await count(cell, 'hold_seats'),
      outbox: await count(cell, 'outbox'),
    }).toEqual(before);
  });

  it('the same seats in another order are the same request', async ({ identity, cell, event }) => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const key = randomUUID();
    const seats = [event.seats[20]!.id, event.seats[21]!.id];
    const first = await (await buyer.hold(seats, key)).json();
    const again = await buyer.hold([...seats].reverse(), key);
    expect(again.status).toBe(202);
    expect((await again.json()).orderId).toBe(first.orderId);
  });

  it('a key is scoped to its buyer: another buyer with the same key gets their own answer', async ({
    identity,
    cell,
    event,
  }) => {
    const key = randomUUID();
    const a = await admittedBuyer(identity, cell, event.eventId);
    const b = await admittedBuyer(identity, cell, event.eventId);
    expect((await a.hold([event.seats[30]!.id], key)).status).toBe(202);
    const res = await b.hold([event.seats[30]!.id], key);
    expect(res.status).toBe(409);
    expect((await res.json()).error.code).toBe('seats_unavailable');
  });

  it('a refused request leaves no key behind: the retry runs again once the seat is free', async ({
    identity,
    cell,
    event,
  }) => {
    const holder = await admittedBuyer(identity, cell, event.eventId);
    const seat = event.seats[40]!.id;
    const held = await (await holder.hold([seat])).json();
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const key = randomUUID();
    expect((await buyer.hold([seat], key)).status).toBe(409);
    expect(await cell.db.query('SELECT 1 FROM idempotency_keys WHERE user_id = $1', [buyer.userId])).toEqual([]);
    expect((await holder.release(held.orderId)).status).toBe(200);
    expect((await buyer.hold([seat], key)).status).toBe(202);
  });
});
