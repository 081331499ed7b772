import { describe, expect } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import type { TestCell } from '../../test/support/cell';
import { paymentsCellTest, seatHolder } from '../../test/support/fixtures';
import { eventually } from '../../test/support/kafka';
import { orderStatus } from '../../test/support/saga';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { intentsFor, payInBrowser } from '../../test/support/stripe';

// Each test loads an event of its own.
const it = paymentsCellTest({ prefix: 'sales' });

const setSales = (cell: TestCell, eventId: string, status: string, reason?: string) =>
  fetch(`${cell.url}/internal/events/${eventId}/sales`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${cell.internalToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ status, reason }),
  });

const statusIs = (cell: TestCell, orderId: string, status: string) => async () =>
  (await orderStatus(cell, orderId)) === status;

describe('pause and resume', () => {
  it('a paused sale refuses new holds with the reason; live holds run on; resume lets buyers in again', async ({
    identity,
    cell,
    stripe,
  }) => {
    const event = await loadIntoCell(cell, eventLoad(10));
    const hold = seatHolder({ identity, cell, event });
    const live = await hold(1);

    expect((await setSales(cell, event.eventId, 'paused', 'technical check')).status).toBe(200);
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const refused = await buyer.hold([event.seats[5]!.id]);
    expect(refused.status).toBe(409);
    const body = await refused.json();
    expect(body.error.code).toBe('onsale_paused');
    expect(body.error.message).toContain('technical check');
    // The live hold is untouched and can still be paid.
    expect(await orderStatus(cell, live.orderId)).toBe('pending_payment');
    await payInBrowser(stripe, () => live.buyer.order(live.orderId), 'pm_card_visa');
    await eventually(statusIs(cell, live.orderId, 'ticketed'), 'paid during the pause');

    expect((await setSales(cell, event.eventId, 'on_sale')).status).toBe(200);
    expect((await buyer.hold([event.seats[5]!.id])).status).toBe(202);
  });
});

describe('cancel an event', () => {
  it('ends every order: holds released, authorizations cancelled, paid orders refunded, tickets voided', async ({
    identity,
    cell,
    emulator,
    stripe,
  }) => {
    const event = await loadIntoCell(cell, eventLoad(20));
    const hold = seatHolder({ identity, cell, event });
    const before = emulator.control.counters();

    // Ticketed: paid and issued.
    const ticketed = await hold(2);
    await payInBrowser(stripe, () => ticketed.buyer.order(ticketed.orderId), 'pm_card_visa');
    await eventually(statusIs(cell, ticketed.orderId, 'ticketed'), 'ticketed order');
    // Held with a PaymentIntent waiting for the buyer.
    const withIntent = await hold(1);
    await eventually(
      async () =>
        (await cell.db.query('SELECT 1 FROM payments WHERE order_id = $1', [withIntent.orderId])).length === 1,
      'intent created',
    );
    // Held, nothing else yet; and one already expired (stays expired).
    const held = await hold(3);

    const res = await setSales(cell, event.eventId, 'canceled', 'artist ill');
    expect(res.status).toBe(200);
    const answer = await res.json();
    expect(answer).toMatchObject({
      status: 'canceled',
      canceled: { holdsReleased: 2, refundsRequested: 1, ticketsVoided: 2 },
    });

    // No seat of the event is held any more, and nobody can hold one.
    const active = await cell.db.query(
      `SELECT 1 FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id
        WHERE h.event_id = $1 AND hs.released_at IS NULL AND h.status = 'active'`,
      [event.eventId],
    );
    expect(active).toEqual([]);
    const late = await admittedBuyer(identity, cell, event.eventId);
    const refused = await late.hold([event.seats[19]!.id]);
    expect(refused.status).toBe(409);
    expect((await refused.json()).error.code).toBe('event_canceled');
    expect((await setSales(cell, event.eventId, 'on_sale')).status).toBe(409);

    // The saga finishes the money: refund for the paid order, cancelled authorization for the held one.
    await eventually(statusIs(cell, ticketed.orderId, 'refunded'), 'refunded order');
    expect(await orderStatus(cell, withIntent.orderId)).toBe('canceled');
    expect(await orderStatus(cell, held.orderId)).toBe('canceled');
    await eventually(
      async () => intentsFor(emulator, withIntent.orderId)[0]?.status === 'canceled',
      'authorization cancelled',
    );
    const [paidIntent] = intentsFor(emulator, ticketed.orderId);
    expect(paidIntent?.status).toBe('succeeded');
    expect(emulator.control.counters().refunds - before.refunds).toBe(1);
    const voided = await cell.db.query<{ voided: boolean }>(
      'SELECT voided_at IS NOT NULL AS voided FROM tickets WHERE order_id = $1',
      [ticketed.orderId],
    );
    expect(voided.map((t) => t.voided)).toEqual([true, true]);

    // Every order of the event is terminal; a second cancel changes nothing.
    const open = await cell.db.query(
      `SELECT id, status FROM orders WHERE event_id = $1 AND status NOT IN ('canceled', 'refunded', 'expired', 'failed', 'released')`,
      [event.eventId],
    );
    expect(open).toEqual([]);
    const again = await (await setSales(cell, event.eventId, 'canceled')).json();
    expect(again.canceled).toEqual({ holdsReleased: 0, refundsRequested: 0, ticketsVoided: 0, pendingCapture: 0 });
  });

  it('a buyer who pays after the cancel is not charged: the authorization is cancelled', async ({
    identity,
    cell,
    emulator,
    stripe,
  }) => {
    const event = await loadIntoCell(cell, eventLoad(5));
    const hold = seatHolder({ identity, cell, event });
    const { orderId } = await hold(1);
    await eventually(
      async () => (await cell.db.query('SELECT 1 FROM payments WHERE order_id = $1', [orderId])).length === 1,
      'intent created',
    );
    expect((await setSales(cell, event.eventId, 'canceled')).status).toBe(200);
    // The buyer's page still has the client secret and confirms anyway.
    const secret = (
      await cell.db.query<{ client_secret: string }>('SELECT client_secret FROM payments WHERE order_id = $1', [
        orderId,
      ])
    )[0]!.client_secret;
    const intentId = secret.slice(0, secret.indexOf('_secret_'));
    await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' }).catch(() => undefined);
    await eventually(async () => intentsFor(emulator, orderId)[0]?.status === 'canceled', 'authorization cancelled');
    expect(await orderStatus(cell, orderId)).toBe('canceled');
    expect(intentsFor(emulator, orderId)[0]?.amount_received ?? 0).toBe(0);
  });
});
