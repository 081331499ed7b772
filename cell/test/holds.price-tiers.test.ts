import type { EventLoad } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { eventLoad, loadIntoCell, seatMap } from '../../test/support/seed';

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;

const tiers: NonNullable<EventLoad['tiers']> = [
  { code: 'floor', name: 'Floor', price: 12_000, currency: 'eur', fee: 1_500, fees: 'added' },
  { code: 'stand', name: 'Stand', price: 6_000, currency: 'eur', fee: 700, fees: 'included' },
];

function tieredLoad(): EventLoad {
  const seats = seatMap(20).map((s, i) => {
    const t = i < 10 ? tiers[0]! : tiers[1]!;
    return { ...s, tier: t.code, price: t.price, currency: t.currency };
  });
  return eventLoad(0, { seats, tiers });
}

async function load(body: unknown) {
  return fetch(`${cell.url}/internal/events/${(body as EventLoad).eventId}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${cell.internalToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity);
  event = await loadIntoCell(cell, tieredLoad());
});
afterAll(async () => {
  await cell?.close();
  await identity?.close();
});

async function orderOf(orderId: string) {
  const rows = await cell.db.query<{ amount: number; currency: string }>(
    'SELECT amount, currency FROM orders WHERE id = $1',
    [orderId],
  );
  return { amount: rows[0]!.amount, currency: rows[0]!.currency.trim() };
}

describe('price tiers price the order in the cell', () => {
  it('stores the tiers with the event', async () => {
    const rows = await cell.db.query(
      'SELECT code, price, fee, fees_included FROM price_tiers WHERE event_id = $1 ORDER BY code',
      [event.eventId],
    );
    expect(rows).toEqual([
      { code: 'floor', price: 12_000, fee: 1_500, fees_included: false },
      { code: 'stand', price: 6_000, fee: 700, fees_included: true },
    ]);
  });

  it('an order of seats from two tiers costs the tier prices, fees added where the tier adds them', async () => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const res = await buyer.hold([event.seats[0]!.id, event.seats[1]!.id, event.seats[10]!.id]);
    expect(res.status).toBe(202);
    const { orderId } = await res.json();
    expect(await orderOf(orderId)).toEqual({ amount: 2 * (12_000 + 1_500) + 6_000, currency: 'eur' });
    const order = await (await buyer.order(orderId)).json();
    expect(order.amount).toBe(33_000);
    // The order shows each seat at what the buyer pays for it: the lines add up to the amount.
    expect(order.seats.map((s: { price: number }) => s.price).sort()).toEqual([13_500, 13_500, 6_000]);
    // The saga asks for exactly that amount.
    const outbox = await cell.db.query<{
      envelope: { payload: { amount: number; sale: { seats: { price: number }[] } } };
    }>(`SELECT envelope FROM outbox WHERE aggregate_id = $1 AND event_type = 'HoldCreated'`, [orderId]);
    expect(outbox[0]!.envelope.payload.amount).toBe(33_000);
    expect(outbox[0]!.envelope.payload.sale.seats.map((s) => s.price).sort()).toEqual([13_500, 13_500, 6_000]);
  });

  it('the client cannot name a price: an amount in the request is refused', async () => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const res = await buyer.holdRaw(JSON.stringify({ seatIds: [event.seats[2]!.id], amount: 1 }));
    expect(res.status).toBe(400);
  });

  it('a seat whose price disagrees with its tier is refused at load', async () => {
    const bad = tieredLoad();
    bad.seats[3] = { ...bad.seats[3]!, price: 1 };
    const res = await load(bad);
    expect(res.status).toBe(400);
    expect((await res.json()).error.details.issues[0].path).toBe('seats.3.price');
  });

  it('reloading with the same tiers is a no-op; different tiers are a conflict', async () => {
    expect((await load(event)).status).toBe(200);
    const changed = { ...event, tiers: [{ ...tiers[0]!, fee: 99 }, tiers[1]!] };
    const res = await load(changed);
    expect(res.status).toBe(409);
    expect((await res.json()).error.code).toBe('event_conflict');
  });

  it('an event loaded before tiers existed keeps pricing seats by their own price', async () => {
    const plain = await loadIntoCell(cell, eventLoad(5));
    const buyer = await admittedBuyer(identity, cell, plain.eventId);
    const { orderId } = await (await buyer.hold([plain.seats[0]!.id, plain.seats[1]!.id])).json();
    expect(await orderOf(orderId)).toEqual({ amount: 10_000, currency: 'eur' });
  });
});
