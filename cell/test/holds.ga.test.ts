import { randomUUID } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import type { RunningRouter } from '@onsale/router/router';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeControlPlane, routerFor, startFakeControlPlane } from '../../router/test/fakes';
import { admittedBuyer as cellBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { workerContext } from '../../test/support/workers';
import type { CellContext } from '../src/context';
import { expireBatch } from '../src/expiry/expiry-worker';

// Buyers talk to the edge router, as in production. Their admission tokens are minted directly
// (the identity stands in for the control plane's keys): admitting 2,000 buyers through the
// waiting room would spend the run in the queue's release rate, not in the hold transaction.

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
let expiry: CellContext;
let controlPlane: FakeControlPlane;
let router: RunningRouter;
const floor = randomUUID();
const lawn = randomUUID();
const tiers: NonNullable<EventLoad['tiers']> = [
  { code: 'seated', name: 'Seated', price: 5_000, currency: 'eur', fee: 0, fees: 'included' },
  { code: 'ga', name: 'Standing', price: 4_000, currency: 'eur', fee: 450, fees: 'added' },
];

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity);
  expiry = workerContext(cell.cellId, cell.db.url, 'expiry');
  const base = eventLoad(10, { maxSeatsPerOrder: 6, tiers });
  event = await loadIntoCell(cell, {
    ...base,
    seats: base.seats.map((s) => ({ ...s, tier: 'seated' })),
    gaAreas: [
      { id: floor, name: 'Floor', capacity: 500, tier: 'ga' },
      { id: lawn, name: 'Lawn', capacity: 20, tier: 'ga' },
    ],
  });
  controlPlane = await startFakeControlPlane();
  controlPlane.addCell(cell.cellId, cell.url);
  controlPlane.placeEvent(event.eventId, cell.cellId);
  router = await routerFor(controlPlane, identity.admissionJwksUrl);
});
afterAll(async () => {
  await router?.close();
  await controlPlane?.close();
  await expiry?.database.close();
  await cell?.close();
  await identity?.close();
});

const admittedBuyer = (...[i, c, eventId]: Parameters<typeof cellBuyer>) =>
  cellBuyer(i, c, eventId, undefined, router.url);

async function remaining(areaId: string): Promise<number> {
  const rows = await cell.db.query<{ n: number }>(
    'SELECT sum(remaining)::int AS n FROM ga_stripes WHERE area_id = $1',
    [areaId],
  );
  return rows[0]!.n;
}
async function heldUnits(areaId: string): Promise<number> {
  const rows = await cell.db.query<{ n: number }>(
    'SELECT coalesce(sum(quantity), 0)::int AS n FROM hold_ga_units WHERE area_id = $1 AND released_at IS NULL',
    [areaId],
  );
  return rows[0]!.n;
}
/**
 * At most CONNECTIONS requests on the wire at once: the buyers all wait at the same time, but
 * 2,000 simultaneous connects would overflow the listen backlog. A request lost on the wire (a
 * kept-alive socket the loaded server closed), answered 503 "retry shortly" (the admission check's
 * key fetch timing out on this loaded machine) or 504 by the router (the cell slower than its
 * upstream timeout: the hold may have committed) is sent again with the same Idempotency-Key, as a
 * buyer's page does: a retry can only return the original answer, it can never hold twice.
 */
const CONNECTIONS = 200;
let inFlight = 0;
const waiting: (() => void)[] = [];
async function holdGa(buyer: Awaited<ReturnType<typeof admittedBuyer>>, body: unknown): Promise<Response> {
  const key = randomUUID();
  for (let attempt = 1; ; attempt++) {
    if (inFlight >= CONNECTIONS) await new Promise<void>((r) => waiting.push(r));
    inFlight++;
    try {
      const res = await buyer.holdRaw(JSON.stringify(body), key);
      const text = await res.text();
      if ((res.status !== 503 && res.status !== 504) || attempt >= 5)
        return new Response(text, { status: res.status, headers: res.headers });
      await new Promise((r) => setTimeout(r, 200 * attempt));
    } catch (err) {
      if (attempt >= 5) throw err;
    } finally {
      inFlight--;
      waiting.shift()?.();
    }
  }
}

describe('general admission, through the router', () => {
  it('2,000 concurrent buyers on an area of 500: exactly 500 places held, the rest refused, none twice', async () => {
    const buyers = await Promise.all(Array.from({ length: 2_000 }, () => admittedBuyer(identity, cell, event.eventId)));
    const responses = await Promise.all(buyers.map((b) => holdGa(b, { ga: [{ areaId: floor, quantity: 1 }] })));
    const statuses = responses.map((r) => r.status);
    const odd = responses.filter((r) => r.status !== 202 && r.status !== 409);
    expect(await Promise.all(odd.map((r) => r.text()))).toEqual([]);
    expect(statuses.filter((s) => s === 202)).toHaveLength(500);
    expect(statuses.filter((s) => s === 409)).toHaveLength(1_500);
    const refused = await responses.find((r) => r.status === 409)!.json();
    expect(refused.error.code).toBe('seats_unavailable');
    expect(refused.error.details.gaAreas).toEqual([{ areaId: floor, requested: 1, remaining: 0 }]);
    expect(await remaining(floor)).toBe(0);
    expect(await heldUnits(floor)).toBe(500);
    const avail = await (await fetch(`${router.url}/events/${event.eventId}/availability`)).json();
    expect(avail.gaAreas).toContainEqual({ areaId: floor, name: 'Floor', capacity: 500, remaining: 0 });
  }, 120_000);

  it('lapsed holds give their places back: inline to the next buyer, the rest through the expiry worker, once', async () => {
    await cell.db.query(
      `UPDATE holds SET expires_at = now() - interval '1 second'
        WHERE id IN (SELECT hold_id FROM hold_ga_units WHERE area_id = $1)`,
      [floor],
    );
    const next = await admittedBuyer(identity, cell, event.eventId);
    expect((await holdGa(next, { ga: [{ areaId: floor, quantity: 3 }] })).status).toBe(202);
    while ((await expireBatch(expiry, 200)) > 0);
    while ((await expireBatch(expiry, 200)) > 0);
    expect(await remaining(floor)).toBe(497);
    expect(await heldUnits(floor)).toBe(3);
    const expired = await cell.db.query<{ n: number; orders: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT aggregate_id)::int AS orders FROM outbox
        WHERE event_type = 'HoldExpired'
          AND aggregate_id IN (SELECT h.order_id FROM holds h JOIN hold_ga_units g ON g.hold_id = h.id WHERE g.area_id = $1)`,
      [floor],
    );
    expect(expired[0]).toEqual({ n: 500, orders: 500 });
  });

  it('mixed quantities never pass the capacity, and a request for more than is left names what is left', async () => {
    const buyers = await Promise.all(Array.from({ length: 40 }, () => admittedBuyer(identity, cell, event.eventId)));
    const sizes = buyers.map((_, i) => (i % 3) + 1);
    const responses = await Promise.all(
      buyers.map((b, i) => holdGa(b, { ga: [{ areaId: lawn, quantity: sizes[i] }] })),
    );
    const granted = responses.reduce((n, r, i) => n + (r.status === 202 ? sizes[i]! : 0), 0);
    expect(granted).toBeLessThanOrEqual(20);
    expect(granted).toBeGreaterThanOrEqual(18);
    expect(await heldUnits(lawn)).toBe(granted);
    expect(await remaining(lawn)).toBe(20 - granted);
    const late = await admittedBuyer(identity, cell, event.eventId);
    const res = await holdGa(late, { ga: [{ areaId: lawn, quantity: 5 }] });
    expect(res.status).toBe(409);
    expect((await res.json()).error.details.gaAreas[0]).toEqual({
      areaId: lawn,
      requested: 5,
      remaining: 20 - granted,
    });
  });

  it('seats and GA places in one order: the amount comes from the tiers, the buyer limit counts both', async () => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    await cell.db.query('UPDATE ga_stripes SET remaining = capacity WHERE area_id = $1', [lawn]);
    await cell.db.query('UPDATE hold_ga_units SET released_at = now() WHERE area_id = $1', [lawn]);
    const res = await holdGa(buyer, { seatIds: [event.seats[0]!.id], ga: [{ areaId: lawn, quantity: 3 }] });
    expect(res.status).toBe(202);
    const { orderId } = await res.json();
    const order = await cell.db.query<{ amount: number }>('SELECT amount FROM orders WHERE id = $1', [orderId]);
    expect(order[0]!.amount).toBe(5_000 + 3 * (4_000 + 450));
    const created = await cell.db.query<{
      envelope: { payload: { seatIds: string[]; gaUnits: unknown; sale: { seats: unknown[]; ga: unknown } } };
    }>(`SELECT envelope FROM outbox WHERE aggregate_id = $1 AND event_type = 'HoldCreated'`, [orderId]);
    expect(created[0]!.envelope.payload.gaUnits).toEqual([{ areaId: lawn, quantity: 3 }]);
    // The fact reporting counts from names the order's places: its seat and its 3 GA places, by area.
    const gaSold = [{ areaId: lawn, area: 'Lawn', tier: 'ga', quantity: 3, price: 4_450 }];
    expect(created[0]!.envelope.payload.sale.seats).toHaveLength(1);
    expect(created[0]!.envelope.payload.sale.ga).toEqual(gaSold);
    // The buyer's order view lists the seat and the GA places, each priced by its tier.
    const view = await (await buyer.order(orderId)).json();
    expect(view.amount).toBe(5_000 + 3 * (4_000 + 450));
    expect(view.seats.map((x: { seatId: string }) => x.seatId)).toEqual([event.seats[0]!.id]);
    expect(view.gaPlaces).toEqual([{ areaId: lawn, area: 'Lawn', quantity: 3, price: 4_450 }]);
    const over = await holdGa(buyer, { ga: [{ areaId: lawn, quantity: 3 }] });
    expect(over.status).toBe(409);
    expect((await over.json()).error.details).toMatchObject({ limit: 6, held: 4, requested: 3 });
    // Released by the buyer: the places go back once.
    expect((await buyer.release(orderId)).status).toBeLessThan(300);
    expect((await buyer.release(orderId)).status).toBeLessThan(300);
    expect(await remaining(lawn)).toBe(20);
    // A later fact reads the sale context back from the ledger: the released places are still the order's.
    const released = await cell.db.query<{ envelope: { payload: { sale: { ga: unknown } } } }>(
      `SELECT envelope FROM outbox WHERE aggregate_id = $1 AND event_type = 'HoldReleased'`,
      [orderId],
    );
    expect(released.map((r) => r.envelope.payload.sale.ga)).toEqual([gaSold]);
  });

  it('bad GA requests are refused naming the field', async () => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const cases: [unknown, string][] = [
      [{ ga: [{ areaId: floor, quantity: 0 }] }, 'ga.0.quantity'],
      [{ ga: [{ areaId: 'floor', quantity: 1 }] }, 'ga.0.areaId'],
      [
        {
          ga: [
            { areaId: floor, quantity: 5 },
            { areaId: floor, quantity: 1 },
          ],
        },
        'ga',
      ],
      [
        {
          ga: [
            { areaId: floor, quantity: 7 },
            { areaId: lawn, quantity: 2 },
          ],
        },
        'ga',
      ],
      [{ seatIds: [], ga: [] }, 'seatIds'],
    ];
    for (const [body, path] of cases) {
      const res = await holdGa(buyer, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const err = (await res.json()).error;
      expect(err.details.issues.map((i: { path: string }) => i.path)).toContain(path);
    }
    const unknown = await holdGa(buyer, { ga: [{ areaId: randomUUID(), quantity: 1 }] });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe('seats_not_found');
  });

  it('a load with a GA area naming an undeclared tier is refused naming the field', async () => {
    const bad = { ...eventLoad(2), gaAreas: [{ id: randomUUID(), name: 'Pit', capacity: 10, tier: 'nope' }] };
    const res = await fetch(`${cell.url}/internal/events/${bad.eventId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${cell.internalToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(bad),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.details.issues).toEqual([
      { path: 'gaAreas.0.tier', message: "tier 'nope' is not declared in tiers" },
    ]);
  });
});
