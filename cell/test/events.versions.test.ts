import { type EventLoad, parseEnvelope } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { dropCellTopics, eventually, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { envelope, inject, orderStatus, recordPaymentIntent } from '../../test/support/saga';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { startCellWorkers } from '../../test/support/workers';

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
let workers: Awaited<ReturnType<typeof startCellWorkers>>;
const cellId = uniqueCellId('ver');

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity, { cellId });
  await provisionCellTopics(cellId);
  const load = eventLoad(10, { tenantId: 'tenant-versions' });
  load.seats = load.seats.map((s, i) => ({ ...s, tier: i < 5 ? 'gold' : 'floor' }));
  event = await loadIntoCell(cell, load);
  workers = await startCellWorkers(cellId, cell.db.url, { relay: true, saga: true, tickets: true });
});
afterAll(async () => {
  await workers?.stop();
  await cell?.close();
  await identity?.close();
  await dropCellTopics(cellId);
});

const outbox = (orderId: string) =>
  cell.db.query<{ event_type: string; envelope: { schemaVersion: number; payload: Record<string, unknown> } }>(
    'SELECT event_type, envelope FROM outbox WHERE aggregate_id = $1 ORDER BY id',
    [orderId],
  );

/** Holds two seats and walks the order to confirmed, as the payment worker would. */
async function confirmedOrder(seatIndexes: [number, number]) {
  const buyer = await admittedBuyer(identity, cell, event.eventId);
  const seatIds = seatIndexes.map((i) => event.seats[i]!.id);
  const { orderId } = await (await buyer.hold(seatIds)).json();
  const paymentIntentId = await recordPaymentIntent(cell, orderId, 10_000);
  await inject(
    workers.broker,
    cellId,
    envelope(cellId, 'PaymentAuthorized', orderId, { orderId, paymentIntentId, amount: 10_000 }),
  );
  await eventually(async () => (await orderStatus(cell, orderId)) === 'confirmed', 'confirmation');
  return { orderId, paymentIntentId, seatIds };
}

describe('event envelopes v1 and v2 side by side', () => {
  it('HoldCreated goes out as v2 with tenant, seats, sections, tiers and prices', async () => {
    const { orderId, seatIds } = await confirmedOrder([0, 7]);
    const [created] = await outbox(orderId);
    expect(created!.event_type).toBe('HoldCreated');
    expect(created!.envelope.schemaVersion).toBe(2);
    const parsed = parseEnvelope(created!.envelope);
    expect(parsed.payload).toMatchObject({ orderId, amount: 10_000, currency: 'eur' });
    expect((parsed.payload as unknown as { sale: unknown }).sale).toEqual({
      tenantId: 'tenant-versions',
      eventId: event.eventId,
      amount: 10_000,
      currency: 'eur',
      seats: [
        { seatId: seatIds[0], section: event.seats[0]!.section, tier: 'gold', price: 5_000 },
        { seatId: seatIds[1], section: event.seats[7]!.section, tier: 'floor', price: 5_000 },
      ].sort((a, b) => (a.seatId! < b.seatId! ? -1 : 1)),
    });
  });

  it('the saga and the ticket issuer handle a v1 and a v2 PaymentCaptured alike', async () => {
    const v1 = await confirmedOrder([1, 2]);
    const v2 = await confirmedOrder([3, 4]);
    const capturedV1 = envelope(cellId, 'PaymentCaptured', v1.orderId, {
      orderId: v1.orderId,
      paymentIntentId: v1.paymentIntentId,
      amount: 10_000,
    });
    const capturedV2 = {
      ...envelope(cellId, 'PaymentCaptured', v2.orderId, {
        orderId: v2.orderId,
        paymentIntentId: v2.paymentIntentId,
        amount: 10_000,
      }),
      schemaVersion: 2,
      payload: {
        orderId: v2.orderId,
        paymentIntentId: v2.paymentIntentId,
        amount: 10_000,
        sale: { tenantId: 'tenant-versions', eventId: event.eventId, amount: 10_000, currency: 'eur', seats: [] },
      },
    };
    expect(parseEnvelope(capturedV1).schemaVersion).toBe(1);
    expect(parseEnvelope(capturedV2).schemaVersion).toBe(2);
    await inject(workers.broker, cellId, capturedV1);
    await inject(workers.broker, cellId, capturedV2);

    for (const order of [v1, v2]) {
      await eventually(async () => (await orderStatus(cell, order.orderId)) === 'ticketed', 'tickets');
      const tickets = await cell.db.query('SELECT seat_id FROM tickets WHERE order_id = $1', [order.orderId]);
      expect(tickets.map((t) => t.seat_id).sort()).toEqual([...order.seatIds].sort());
      const issued = (await outbox(order.orderId)).find((e) => e.event_type === 'TicketIssued');
      expect(issued!.envelope.schemaVersion).toBe(2);
    }
  });

  it('an unknown version is refused by name, not half-read', () => {
    const bad = {
      ...envelope(cellId, 'OrderConfirmed', crypto.randomUUID(), {
        orderId: crypto.randomUUID(),
        holdId: crypto.randomUUID(),
      }),
      schemaVersion: 2,
    };
    expect(() => parseEnvelope(bad)).toThrow('unknown event OrderConfirmed v2');
  });
});
