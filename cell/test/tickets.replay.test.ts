import { randomUUID } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { dropCellTopics, eventually, provisionCellTopics, readTopic, uniqueCellId } from '../../test/support/kafka';
import { envelope, inject, orderStatus } from '../../test/support/saga';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { startCellWorkers } from '../../test/support/workers';
import { placeHold } from '../src/holds/place-hold';

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
let workers: Awaited<ReturnType<typeof startCellWorkers>>;
const cellId = uniqueCellId('tkt');

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity, { cellId });
  await provisionCellTopics(cellId);
  event = await loadIntoCell(cell, eventLoad(10));
  workers = await startCellWorkers(cellId, cell.db.url, { relay: true, tickets: true });
});
afterAll(async () => {
  await workers?.stop();
  await cell?.close();
  await identity?.close();
  await dropCellTopics(cellId);
});

/** An order the saga has brought to `paid`: its hold confirmed, its seats its own. */
async function paidOrder(seatIds: string[]) {
  const { body } = await placeHold(cell.api.services.ctx, {
    eventId: event.eventId,
    userId: `fan-${randomUUID()}`,
    idempotencyKey: randomUUID(),
    seatIds,
    correlationId: randomUUID(),
  });
  await cell.db.query(`UPDATE holds SET status = 'confirmed' WHERE id = $1`, [body.holdId]);
  await cell.db.query(`UPDATE orders SET status = 'paid' WHERE id = $1`, [body.orderId]);
  return body.orderId;
}

const tickets = (orderId: string) =>
  cell.db.query<{ id: string; seat_id: string }>(
    'SELECT id, seat_id FROM tickets WHERE order_id = $1 ORDER BY seat_id',
    [orderId],
  );

describe('ticket issuing replayed', () => {
  it('one ticket per seat however often the request comes, as one event or several', async () => {
    const seats = [event.seats[0]!.id, event.seats[1]!.id, event.seats[2]!.id];
    const orderId = await paidOrder(seats);
    const request = envelope(cellId, 'TicketIssueRequested', orderId, {
      orderId,
      eventId: event.eventId,
      seatIds: seats,
    });
    await inject(workers.broker, cellId, request, 5);
    // A second request for the same order (a reconciler push, say) is a different event id.
    const again = { ...request, eventId: randomUUID() };
    await inject(workers.broker, cellId, again, 2);

    await eventually(async () => (await tickets(orderId)).length === 3, 'tickets');
    // The requests' own inbox rows: the same consumer also records the TicketIssued the first one publishes.
    await eventually(
      async () =>
        (
          await cell.db.query(`SELECT 1 FROM inbox WHERE consumer = 'tickets' AND event_id = ANY($1::uuid[])`, [
            [request.eventId, again.eventId],
          ])
        ).length === 2,
      'both requests to be applied',
    );
    const issued = await tickets(orderId);
    expect(issued.map((t) => t.seat_id)).toEqual([...seats].sort());
    const perSeat = await cell.db.query(`SELECT seat_id FROM tickets GROUP BY seat_id HAVING count(*) > 1`);
    expect(perSeat).toEqual([]);
  });

  it('a second ticket for a seat under another order is refused and dead-lettered, never issued', async () => {
    const seat = event.seats[5]!.id;
    const first = await paidOrder([seat]);
    await inject(
      workers.broker,
      cellId,
      envelope(cellId, 'TicketIssueRequested', first, { orderId: first, eventId: event.eventId, seatIds: [seat] }),
    );
    await eventually(async () => (await tickets(first)).length === 1, 'the first ticket');

    // A corrupted second order claiming the same seat (what the unique index is there for).
    const rogue = await paidOrder([event.seats[6]!.id]);
    await inject(
      workers.broker,
      cellId,
      envelope(cellId, 'TicketIssueRequested', rogue, { orderId: rogue, eventId: event.eventId, seatIds: [seat] }),
    );
    const dead = await eventually(
      async () => (await readTopic(`cell.${cellId}.purchase.dlq`, 5, 2_000)).find((m) => m.key === rogue),
      'the refusal to be dead-lettered',
    );
    expect(dead!.headers['x-failure-reason']).toMatch(/already has a ticket/);
    expect(await tickets(rogue)).toEqual([]);
    expect(await cell.db.query('SELECT order_id FROM tickets WHERE seat_id = $1', [seat])).toEqual([
      { order_id: first },
    ]);
    expect(await orderStatus(cell, first)).toBe('paid');
  });
});
