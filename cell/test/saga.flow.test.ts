import type { EventLoad } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { dropCellTopics, eventually, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { envelope, inject, orderStatus, outboxEvents, recordPaymentIntent } from '../../test/support/saga';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { startCellWorkers, ticketKeyJson } from '../../test/support/workers';
import { publicTicketJwks, ticketIdFor, verifyTicketWithKeys } from '../src/tickets/signing';

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
let workers: Awaited<ReturnType<typeof startCellWorkers>>;
let ticketKey: string;
const cellId = uniqueCellId('flow');

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity, { cellId });
  await provisionCellTopics(cellId);
  event = await loadIntoCell(cell, eventLoad(20));
  ticketKey = await ticketKeyJson();
  workers = await startCellWorkers(cellId, cell.db.url, { relay: true, saga: true, tickets: true }, ticketKey);
});
afterAll(async () => {
  await workers?.stop();
  await cell?.close();
  await identity?.close();
  await dropCellTopics(cellId);
});

const types = async (orderId: string) => (await outboxEvents(cell, orderId)).map((e) => e.event_type);

describe('the purchase saga, hold to ticketed', () => {
  it('walks every stage with the payment events injected', async () => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const seats = [event.seats[0]!.id, event.seats[1]!.id];
    const { orderId } = await (await buyer.hold(seats)).json();

    await eventually(
      async () => (await types(orderId)).includes('PaymentAuthorizationRequested'),
      'authorization request',
    );
    const paymentIntentId = await recordPaymentIntent(cell, orderId, 10_000);
    await inject(
      workers.broker,
      cellId,
      envelope(cellId, 'PaymentIntentCreated', orderId, { orderId, paymentIntentId, amount: 10_000 }),
    );
    await inject(
      workers.broker,
      cellId,
      envelope(cellId, 'PaymentAuthorized', orderId, { orderId, paymentIntentId, amount: 10_000 }),
    );

    await eventually(async () => (await orderStatus(cell, orderId)) === 'confirmed', 'confirmation');
    expect(await types(orderId)).toEqual([
      'HoldCreated',
      'PaymentAuthorizationRequested',
      'OrderConfirmed',
      'CaptureRequested',
    ]);

    await inject(
      workers.broker,
      cellId,
      envelope(cellId, 'PaymentCaptured', orderId, { orderId, paymentIntentId, amount: 10_000 }),
    );
    await eventually(async () => (await orderStatus(cell, orderId)) === 'ticketed', 'tickets');
    expect(await types(orderId)).toEqual([
      'HoldCreated',
      'PaymentAuthorizationRequested',
      'OrderConfirmed',
      'CaptureRequested',
      'TicketIssueRequested',
      'TicketIssued',
    ]);

    const view = await (await buyer.order(orderId)).json();
    expect(view.status).toBe('ticketed');
    // One ticket per seat, in the order the buyer reads the seats (their labels: S0-R0-0, then S0-R0-1).
    expect(view.tickets.map((t: { seatId: string }) => t.seatId)).toEqual(seats);
    for (const t of view.tickets) {
      const claims = await verifyTicketWithKeys(t.token, publicTicketJwks(ticketKey));
      expect(claims).toMatchObject({
        tid: t.ticketId,
        orderId,
        seatId: t.seatId,
        eventId: event.eventId,
        cell: cellId,
      });
    }
    // The seats stay owned: nobody else can hold them.
    const other = await admittedBuyer(identity, cell, event.eventId);
    expect((await other.hold([seats[0]!])).status).toBe(409);
  });

  it('a payment fact whose intent the ledger lost (published by a writer lost in a failover) is adopted: the order is ticketed with its intent recorded', async () => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const { orderId } = await (await buyer.hold([event.seats[6]!.id])).json();
    await eventually(
      async () => (await types(orderId)).includes('PaymentAuthorizationRequested'),
      'authorization request',
    );
    // No payments row: the lost writer had recorded the intent, the promoted one never saw it.
    const paymentIntentId = `pi_lost_${orderId.slice(0, 8)}`;
    await inject(
      workers.broker,
      cellId,
      envelope(cellId, 'PaymentAuthorized', orderId, { orderId, paymentIntentId, amount: 5_000 }),
    );
    await eventually(async () => (await orderStatus(cell, orderId)) === 'confirmed', 'confirmation');
    await inject(
      workers.broker,
      cellId,
      envelope(cellId, 'PaymentCaptured', orderId, { orderId, paymentIntentId, amount: 5_000 }),
    );
    await eventually(async () => (await orderStatus(cell, orderId)) === 'ticketed', 'tickets');
    const [payment] = await cell.db.query<{ payment_intent_id: string; status: string }>(
      'SELECT payment_intent_id, status FROM payments WHERE order_id = $1',
      [orderId],
    );
    expect(payment).toEqual({ payment_intent_id: paymentIntentId, status: 'captured' });
    const incidents = await cell.db.query<{ kind: string }>('SELECT kind FROM incidents WHERE order_id = $1', [
      orderId,
    ]);
    expect(incidents.map((i) => i.kind)).toEqual(['intent_adopted']);
  });

  it('a TicketIssued whose tickets the ledger lost (a writer failed over after the relay published it) asks for them again: the order is ticketed with its tickets', async () => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const seat = event.seats[8]!.id;
    const { orderId, holdId } = await (await buyer.hold([seat])).json();
    // Paid, as the promoted writer has it: the issuing's commit (tickets and their event) went with the lost one.
    await cell.db.query(`UPDATE holds SET status = 'confirmed' WHERE id = $1`, [holdId]);
    await cell.db.query(`UPDATE orders SET status = 'paid' WHERE id = $1`, [orderId]);
    await inject(
      workers.broker,
      cellId,
      envelope(cellId, 'TicketIssued', orderId, { orderId, ticketIds: [ticketIdFor(orderId, seat)] }),
    );
    await eventually(async () => (await orderStatus(cell, orderId)) === 'ticketed', 'tickets');
    const tickets = await cell.db.query<{ id: string; seat_id: string }>(
      'SELECT id, seat_id FROM tickets WHERE order_id = $1',
      [orderId],
    );
    expect(tickets).toEqual([{ id: ticketIdFor(orderId, seat), seat_id: seat }]);
    expect((await types(orderId)).filter((t) => t.startsWith('Ticket'))).toEqual([
      'TicketIssueRequested',
      'TicketIssued',
    ]);
  });

  it('a payment fact for an intent other than the one the order records moves nothing', async () => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const { orderId } = await (await buyer.hold([event.seats[7]!.id])).json();
    await eventually(
      async () => (await types(orderId)).includes('PaymentAuthorizationRequested'),
      'authorization request',
    );
    const paymentIntentId = await recordPaymentIntent(cell, orderId, 5_000);
    const stray = { orderId, paymentIntentId: `pi_stray_${orderId.slice(0, 8)}`, amount: 5_000 };
    await inject(workers.broker, cellId, envelope(cellId, 'PaymentAuthorized', orderId, stray));
    // The same order's partition: the recorded intent's authorization comes after the stray one.
    await inject(
      workers.broker,
      cellId,
      envelope(cellId, 'PaymentAuthorized', orderId, { orderId, paymentIntentId, amount: 5_000 }),
    );
    await eventually(async () => (await orderStatus(cell, orderId)) === 'confirmed', 'confirmation');
    const captures = (await outboxEvents(cell, orderId)).filter((e) => e.event_type === 'CaptureRequested');
    expect(captures.map((e) => e.envelope.payload.paymentIntentId)).toEqual([paymentIntentId]);
  });

  it('a declined payment fails the order and gives the seats back', async () => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const { orderId } = await (await buyer.hold([event.seats[5]!.id])).json();
    await eventually(
      async () => (await types(orderId)).includes('PaymentAuthorizationRequested'),
      'authorization request',
    );
    const paymentIntentId = await recordPaymentIntent(cell, orderId, 5_000);
    await inject(
      workers.broker,
      cellId,
      envelope(cellId, 'PaymentFailed', orderId, { orderId, paymentIntentId, reason: 'card_declined' }),
    );
    await eventually(async () => (await orderStatus(cell, orderId)) === 'failed', 'failure');
    expect(await types(orderId)).toContain('HoldReleased');
    const other = await admittedBuyer(identity, cell, event.eventId);
    expect((await other.hold([event.seats[5]!.id])).status).toBe(202);
  });
});
