import { randomUUID } from 'node:crypto';
import type { EventLoad, EventType } from '@onsale/contracts';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { envelope, orderStatus, outboxEvents, recordPaymentIntent } from '../../test/support/saga';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { workerContext } from '../../test/support/workers';
import type { CellContext } from '../src/context';
import { withWriteTx } from '../src/db/tx';
import { readLedgerFigures } from '../src/ops/signals';
import { sagaHandlers } from '../src/saga/transitions';
import { ticketHandlers } from '../src/tickets/issue-tickets';
import { publicTicketJwks, ticketSigner, verifyTicketWithKeys } from '../src/tickets/signing';

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
let saga: CellContext;
const lawn = randomUUID();

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity);
  saga = workerContext(cell.cellId, cell.db.url, 'saga');
  event = await loadIntoCell(
    cell,
    eventLoad(4, {
      tiers: [{ code: 'ga', name: 'Lawn', price: 3_000, currency: 'eur', fee: 0, fees: 'included' }],
      gaAreas: [{ id: lawn, name: 'Lawn', capacity: 2, tier: 'ga' }],
    }),
  );
});
afterAll(async () => {
  await saga?.database.close();
  await cell?.close();
  await identity?.close();
});

/** Applies a saga event as the saga consumer does (its own event id each time: a redelivery the inbox cannot match). */
async function apply<T extends EventType>(type: T, orderId: string, payload: Parameters<typeof envelope<T>>[3]) {
  const env = envelope(cell.cellId, type, orderId, payload);
  const handler = sagaHandlers[type] as unknown as (tx: unknown, e: unknown, c: unknown) => Promise<void>;
  await withWriteTx(saga, (tx) =>
    handler(tx, env, { cellId: cell.cellId, correlationId: env.correlationId, causationId: env.eventId }),
  );
}

/** A buyer holds, pays and gets a ticket for the first seat (the ticket row as the issuer writes it). */
async function paidOrder(seatIds: string[], ga: number) {
  const buyer = await admittedBuyer(identity, cell, event.eventId);
  const res = await buyer.holdRaw(JSON.stringify({ seatIds, ga: [{ areaId: lawn, quantity: ga }] }));
  expect(res.status).toBe(202);
  const { orderId } = await res.json();
  const rows = await cell.db.query<{ amount: number }>('SELECT amount FROM orders WHERE id = $1', [orderId]);
  const amount = rows[0]!.amount;
  const paymentIntentId = await recordPaymentIntent(cell, orderId, amount);
  await apply('PaymentAuthorized', orderId, { orderId, paymentIntentId, amount });
  await apply('PaymentCaptured', orderId, { orderId, paymentIntentId, amount });
  await cell.db.query(
    `INSERT INTO tickets (id, order_id, event_id, seat_id, user_id, token) VALUES ($1, $2, $3, $4, $5, 'signed')`,
    [`tkt_${randomUUID()}`, orderId, event.eventId, seatIds[0], buyer.userId],
  );
  await apply('TicketIssued', orderId, { orderId, ticketIds: [] });
  expect(await orderStatus(cell, orderId)).toBe('ticketed');
  return { orderId, paymentIntentId };
}

const refund = (orderId: string, body: unknown = { reason: 'buyer cannot attend' }) =>
  fetch(`${cell.url}/internal/events/${event.eventId}/orders/${orderId}/refund`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cell.internalToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('returned seats', () => {
  it("a refunded order's seats and GA places are bought again by another buyer, once", async () => {
    const seats = event.seats.slice(0, 2).map((s) => s.id);
    const { orderId, paymentIntentId } = await paidOrder(seats, 2);
    const available = async () => (await readLedgerFigures(cell.api.services.ctx)).availableSeats[event.eventId];
    expect(await available()).toBe(2); // two seats left of four, the lawn sold out

    // Sold out: nobody else gets these seats or places.
    const rival = await admittedBuyer(identity, cell, event.eventId);
    expect((await rival.hold([seats[0]!])).status).toBe(409);

    // The promoter cancels the paid order: refunding, tickets voided, the refund requested; seats still taken.
    const r = await refund(orderId);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ orderId, status: 'refunding' });
    expect((await refund(orderId)).status).toBe(200);
    const requested = (await outboxEvents(cell, orderId)).filter((e) => e.event_type === 'RefundRequested');
    expect(requested).toHaveLength(1);
    const tickets = await cell.db.query('SELECT 1 FROM tickets WHERE order_id = $1 AND voided_at IS NULL', [orderId]);
    expect(tickets).toHaveLength(0);
    expect(await available()).toBe(2);

    // The refund lands, and lands again (a second Refunded with its own event id): the seats return once.
    await apply('Refunded', orderId, { orderId, paymentIntentId, refundId: 're_1' });
    await apply('Refunded', orderId, { orderId, paymentIntentId, refundId: 're_1' });
    expect(await orderStatus(cell, orderId)).toBe('refunded');
    const released = (await outboxEvents(cell, orderId)).filter((e) => e.event_type === 'HoldReleased');
    expect(released).toHaveLength(1);
    expect(released[0]!.envelope.payload).toMatchObject({
      reason: 'refunded',
      gaUnits: [{ areaId: lawn, quantity: 2 }],
    });
    expect(await available()).toBe(6); // the release controller sees the returns: 4 seats + 2 places
    const lawnLeft = await cell.db.query<{ n: number }>(
      'SELECT sum(remaining)::int AS n FROM ga_stripes WHERE area_id = $1',
      [lawn],
    );
    expect(lawnLeft[0]!.n).toBe(2);

    // Two buyers race for the returned seats: exactly one gets them, and can be ticketed for them.
    const [b1, b2] = await Promise.all([1, 2].map(() => admittedBuyer(identity, cell, event.eventId)));
    const answers = await Promise.all(
      [b1!, b2!].map((b) => b.holdRaw(JSON.stringify({ seatIds: seats, ga: [{ areaId: lawn, quantity: 2 }] }))),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
    const winner = await answers.find((a) => a.status === 202)!.json();
    await cell.db.query(
      `INSERT INTO tickets (id, order_id, event_id, seat_id, user_id, token) VALUES ($1, $2, $3, $4, 'b', 'signed')`,
      [`tkt_${randomUUID()}`, winner.orderId, event.eventId, seats[0]],
    );
    // Still one valid ticket per seat: a third would be refused by the index.
    await expect(
      cell.db.query(
        `INSERT INTO tickets (id, order_id, event_id, seat_id, user_id, token) VALUES ($1, $2, $3, $4, 'c', 'signed')`,
        [`tkt_${randomUUID()}`, winner.orderId, event.eventId, seats[0]],
      ),
    ).rejects.toThrow(/tickets_seat_uq/);
  });

  it('refuses to refund an unpaid order, and an unknown one, with a clear error', async () => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const { orderId } = await (await buyer.hold([event.seats[3]!.id])).json();
    const r = await refund(orderId);
    expect(r.status).toBe(409);
    expect((await r.json()).error).toMatchObject({
      code: 'order_not_releasable',
      details: { status: 'pending_payment' },
    });
    expect((await refund(randomUUID())).status).toBe(404);
    expect((await refund(orderId, { reason: '' })).status).toBe(400);
  });

  it('a paid order of GA places gets one ticket per place, naming its area and unit number, once', async () => {
    await cell.db.query('UPDATE ga_stripes SET remaining = capacity WHERE area_id = $1', [lawn]);
    await cell.db.query('UPDATE hold_ga_units SET released_at = now() WHERE area_id = $1 AND released_at IS NULL', [
      lawn,
    ]);
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const res = await buyer.holdRaw(JSON.stringify({ ga: [{ areaId: lawn, quantity: 2 }] }));
    expect(res.status).toBe(202);
    const { orderId } = await res.json();
    const paymentIntentId = await recordPaymentIntent(cell, orderId, 6_000);
    await apply('PaymentAuthorized', orderId, { orderId, paymentIntentId, amount: 6_000 });
    await apply('PaymentCaptured', orderId, { orderId, paymentIntentId, amount: 6_000 });
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const ticketKey = JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'k1' });
    const sign = await ticketSigner(ticketKey);
    const handlers = ticketHandlers(sign, cell.api.services.ctx.log);
    const env = envelope(cell.cellId, 'TicketIssueRequested', orderId, {
      orderId,
      eventId: event.eventId,
      seatIds: [],
    });
    for (let i = 0; i < 2; i++)
      await withWriteTx(saga, (tx) =>
        handlers.TicketIssueRequested!(tx, env as never, {
          cellId: cell.cellId,
          correlationId: 'c',
          causationId: env.eventId,
        }),
      );
    const tickets = await cell.db.query<{ ga_area_id: string; unit_no: number; token: string }>(
      'SELECT ga_area_id, unit_no, token FROM tickets WHERE order_id = $1 ORDER BY unit_no',
      [orderId],
    );
    expect(tickets.map((t) => [t.ga_area_id, t.unit_no])).toHaveLength(2);
    expect(new Set(tickets.map((t) => t.unit_no)).size).toBe(2);
    const claims = await verifyTicketWithKeys(tickets[0]!.token, publicTicketJwks(ticketKey));
    expect(claims.ga).toEqual({ areaId: lawn, area: 'Lawn', unit: tickets[0]!.unit_no });
    // The buyer sees the two tickets in the order, each naming its area and unit instead of a seat.
    const view = await (await buyer.order(orderId)).json();
    expect(view.tickets.map((t: { seatId: string | null; ga: unknown }) => [t.seatId, t.ga])).toEqual(
      tickets.map((t) => [null, { areaId: lawn, area: 'Lawn', unit: t.unit_no }]),
    );
  });
});
