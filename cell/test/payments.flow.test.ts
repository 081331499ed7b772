import type Stripe from 'stripe';
import { describe, expect } from 'vitest';
import { admittedBuyer, type Buyer } from '../../test/support/buyer';
import type { TestCell } from '../../test/support/cell';
import { paymentsCellTest } from '../../test/support/fixtures';
import { eventually } from '../../test/support/kafka';
import { envelope, inject, orderStatus } from '../../test/support/saga';
import { eventCounts, intentsFor, payInBrowser } from '../../test/support/stripe';

const it = paymentsCellTest({ prefix: 'pay', seats: 60, env: { LOG_LEVEL: 'debug' } });
const secrets: string[] = [];

it.beforeEach(({ emulator }) => {
  emulator.control.setWebhookFaults({});
});

async function pay(stripe: Stripe, buyer: Buyer, orderId: string, card: string) {
  const paid = await payInBrowser(stripe, () => buyer.order(orderId), card);
  secrets.push(paid.clientSecret);
  return paid;
}

const statusIs = (cell: TestCell, orderId: string, status: string) => async () =>
  (await orderStatus(cell, orderId)) === status;
const tickets = async (cell: TestCell, orderId: string) =>
  (await cell.db.query('SELECT seat_id FROM tickets WHERE order_id = $1', [orderId])).length;

describe('payments through Stripe (the emulator), one cell', () => {
  it('hold, PaymentIntent, the buyer confirms with a good card, webhook, confirm, capture, tickets', async ({
    identity,
    cellId,
    cell,
    event,
    emulator,
    stripe,
    hold,
  }) => {
    const { buyer, orderId, seatIds } = await hold(2);
    const { paymentIntentId } = await pay(stripe, buyer, orderId, 'pm_card_visa');

    await eventually(statusIs(cell, orderId, 'ticketed'), 'ticketed order');
    expect(await tickets(cell, orderId)).toBe(2);
    const [intent] = intentsFor(emulator, orderId);
    expect(intent).toMatchObject({
      id: paymentIntentId,
      status: 'succeeded',
      capture_method: 'manual',
      amount: 10_000,
      amount_received: 10_000,
      metadata: { orderId, cellId, eventId: event.eventId },
    });
    expect(intentsFor(emulator, orderId)).toHaveLength(1);
    const payment = (await cell.db.query('SELECT status FROM payments WHERE order_id = $1', [orderId]))[0];
    expect(payment?.status).toBe('captured');

    const counts = await eventCounts(cell, orderId);
    expect(counts).toMatchObject({ PaymentIntentCreated: 1, OrderConfirmed: 1, CaptureRequested: 1, TicketIssued: 1 });
    // The secret is shown only while the buyer still has to pay.
    const view = await (await buyer.order(orderId)).json();
    expect(view.payment).toEqual({ paymentIntentId, status: 'captured' });
    const other = await admittedBuyer(identity, cell, event.eventId);
    expect((await other.order(orderId)).status).toBe(404);
    expect((await other.hold([seatIds[0]!])).status).toBe(409);
  });

  it('an authorization request issued again for an order whose intent record was lost reaches the same intent', async ({
    cellId,
    cell,
    emulator,
    workers,
    hold,
  }) => {
    const { orderId } = await hold();
    const recorded = async () =>
      (
        await cell.db.query<{ payment_intent_id: string }>(
          'SELECT payment_intent_id FROM payments WHERE order_id = $1',
          [orderId],
        )
      )[0]?.payment_intent_id;
    const first = await eventually(recorded, 'intent recorded');
    // A writer failover lost the payment row and the saga's record of the step: the step runs again, a new event.
    await cell.db.query('DELETE FROM payments WHERE order_id = $1', [orderId]);
    const [order] = await cell.db.query<{ amount: number; currency: string; user_id: string }>(
      'SELECT amount, trim(currency) AS currency, user_id FROM orders WHERE id = $1',
      [orderId],
    );
    await inject(
      workers.broker,
      cellId,
      envelope(cellId, 'PaymentAuthorizationRequested', orderId, {
        orderId,
        amount: order!.amount,
        currency: order!.currency,
        userId: order!.user_id,
      }),
    );
    expect(await eventually(recorded, 'intent recorded again')).toBe(first);
    expect(intentsFor(emulator, orderId)).toHaveLength(1);
  });

  it('a declined card fails the order and gives the seats back; nothing is captured', async ({
    identity,
    cell,
    event,
    emulator,
    stripe,
    hold,
  }) => {
    const before = emulator.control.counters();
    const { buyer, orderId, seatIds } = await hold();
    const { declined } = await pay(stripe, buyer, orderId, 'pm_card_chargeDeclined');
    expect(declined?.code).toBe('card_declined');

    await eventually(statusIs(cell, orderId, 'failed'), 'failed order');
    const order = (await cell.db.query('SELECT failure_reason FROM orders WHERE id = $1', [orderId]))[0];
    expect(order?.failure_reason).toContain('card_declined');
    const other = await admittedBuyer(identity, cell, event.eventId);
    expect((await other.hold(seatIds)).status).toBe(202);
    const after = emulator.control.counters();
    expect(after.captures - before.captures).toBe(0);
    expect(after.authorizations - before.authorizations).toBe(0);
    expect(after.declines - before.declines).toBe(1);
  });

  it('every webhook delivered ten times: one confirmation, one capture, one ticket per seat', async ({
    cell,
    emulator,
    stripe,
    hold,
  }) => {
    emulator.control.setWebhookFaults({ duplicates: 10 });
    const before = emulator.control.counters();
    const { buyer, orderId } = await hold(2);
    const { paymentIntentId } = await pay(stripe, buyer, orderId, 'pm_card_visa');

    await eventually(statusIs(cell, orderId, 'ticketed'), 'ticketed order');
    await emulator.control.waitForWebhooks(30_000);
    expect(emulator.control.counters().captures - before.captures).toBe(1);
    expect(await tickets(cell, orderId)).toBe(2);
    const counts = await eventCounts(cell, orderId);
    expect(counts).toMatchObject({ OrderConfirmed: 1, CaptureRequested: 1, TicketIssueRequested: 1, TicketIssued: 1 });
    // Each Stripe event was taken in once, whatever the number of deliveries.
    const accepted = await cell.db.query<{ type: string; n: number }>(
      'SELECT type, count(*)::int AS n FROM stripe_events WHERE payment_intent_id = $1 GROUP BY type ORDER BY type',
      [paymentIntentId],
    );
    expect(accepted).toEqual([
      { type: 'payment_intent.amount_capturable_updated', n: 1 },
      { type: 'payment_intent.succeeded', n: 1 },
    ]);
    const delivered = emulator.control
      .webhookAttempts()
      .filter((a) => a.outcome === 'delivered' && a.eventType === 'payment_intent.succeeded');
    expect(delivered.length).toBeGreaterThanOrEqual(10);
  });

  it('an authorization after the hold lapsed is cancelled at Stripe and the order expires', async ({
    identity,
    cell,
    event,
    emulator,
    stripe,
    hold,
  }) => {
    const before = emulator.control.counters();
    const { buyer, orderId, seatIds } = await hold();
    await eventually(
      async () => (await cell.db.query('SELECT 1 FROM payments WHERE order_id = $1', [orderId])).length === 1,
      'recorded intent',
    );
    // The clock passes the hold's expiry before the buyer pays (no expiry sweep has run yet).
    await cell.db.query(`UPDATE holds SET expires_at = now() - interval '1 second' WHERE order_id = $1`, [orderId]);
    const { paymentIntentId } = await pay(stripe, buyer, orderId, 'pm_card_visa');

    await eventually(async () => intentsFor(emulator, orderId)[0]?.status === 'canceled', 'canceled intent');
    await eventually(statusIs(cell, orderId, 'expired'), 'expired order');
    await eventually(
      async () =>
        (await cell.db.query('SELECT status FROM payments WHERE order_id = $1', [orderId]))[0]?.status === 'canceled',
      'payment recorded canceled',
    );
    expect(intentsFor(emulator, orderId)[0]?.id).toBe(paymentIntentId);
    const after = emulator.control.counters();
    expect(after.captures - before.captures).toBe(0);
    expect(after.cancellations - before.cancellations).toBe(1);
    const other = await admittedBuyer(identity, cell, event.eventId);
    expect((await other.hold(seatIds)).status).toBe(202);
  });

  it('a capture whose response is lost (Stripe captured) is retried with its key: one capture', async ({
    cell,
    emulator,
    stripe,
    hold,
  }) => {
    const before = emulator.control.counters();
    const { buyer, orderId } = await hold();
    emulator.control.injectFailures('payment_intents.capture', 1, 'lost_response');
    await pay(stripe, buyer, orderId, 'pm_card_visa');

    await eventually(statusIs(cell, orderId, 'ticketed'), 'ticketed order');
    expect(emulator.control.pendingFailures()).toEqual([]);
    expect(emulator.control.counters().captures - before.captures).toBe(1);
    expect(await eventCounts(cell, orderId)).toMatchObject({ CaptureRequested: 1, TicketIssueRequested: 1 });
  });

  it('a capture Stripe refuses releases the seats and fails the order', async ({
    identity,
    cell,
    event,
    emulator,
    stripe,
    hold,
  }) => {
    const before = emulator.control.counters();
    const { buyer, orderId, seatIds } = await hold();
    // The capture is held at Stripe for 1.5 s; meanwhile the authorization is voided there (as
    // an expired or issuer-reversed authorization is), so the capture meets a permanent refusal.
    emulator.control.setLatency('payment_intents.capture', 1_500);
    const { paymentIntentId } = await pay(stripe, buyer, orderId, 'pm_card_visa');
    await eventually(statusIs(cell, orderId, 'confirmed'), 'confirmed order');
    await new Promise((r) => setTimeout(r, 300));
    await stripe.paymentIntents.cancel(paymentIntentId);

    await eventually(statusIs(cell, orderId, 'failed'), 'failed order');
    emulator.control.setLatency('payment_intents.capture', 0);
    const order = (await cell.db.query('SELECT failure_reason FROM orders WHERE id = $1', [orderId]))[0];
    expect(order?.failure_reason).toContain('capture_failed');
    expect(order?.failure_reason).toContain('payment_intent_unexpected_state');
    expect(emulator.control.counters().captures - before.captures).toBe(0);
    const other = await admittedBuyer(identity, cell, event.eventId);
    expect((await other.hold(seatIds)).status).toBe(202);
  });

  it('money captured for seats already released is refunded once, with an incident row', async ({
    cell,
    emulator,
    stripe,
    hold,
  }) => {
    const before = emulator.control.counters();
    const { buyer, orderId } = await hold();
    const view = await eventually(async () => {
      const v = await (await buyer.order(orderId)).json();
      return v.payment?.clientSecret ? v : null;
    }, 'client secret');
    secrets.push(view.payment.clientSecret);
    const paymentIntentId = view.payment.paymentIntentId as string;

    // The buyer gives the seats back; the cancellation is slow to reach Stripe, and before it
    // does the buyer's page confirms and the money is captured outside the saga (a stray
    // capture, as from the dashboard).
    emulator.control.setLatency('payment_intents.cancel', 2_000);
    expect((await buyer.release(orderId)).status).toBe(200);
    await stripe.paymentIntents.confirm(paymentIntentId, { payment_method: 'pm_card_visa' });
    await stripe.paymentIntents.capture(paymentIntentId);

    await eventually(statusIs(cell, orderId, 'refunded'), 'refunded order', 60_000);
    const incidents = await cell.db.query('SELECT kind FROM incidents WHERE order_id = $1', [orderId]);
    expect(incidents).toEqual([{ kind: 'captured_after_release' }]);
    await emulator.control.waitForWebhooks(30_000);
    expect(emulator.control.counters().refunds - before.refunds).toBe(1);
    const payment = (await cell.db.query('SELECT status FROM payments WHERE order_id = $1', [orderId]))[0];
    expect(payment?.status).toBe('refunded');
    emulator.control.setLatency('payment_intents.cancel', 0);
  });

  it('no client secret in any log line or on the outbox', async ({ cell, logs }) => {
    expect(secrets.length).toBeGreaterThan(3);
    const outbox = (await cell.db.query<{ envelope: unknown }>('SELECT envelope FROM outbox')).map((r) =>
      JSON.stringify(r.envelope),
    );
    expect(logs.lines.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      expect(logs.lines.filter((l) => l.includes(secret))).toEqual([]);
      expect(outbox.filter((e) => e.includes(secret))).toEqual([]);
      expect(logs.lines.filter((l) => l.includes(secret.split('_secret_')[1]!))).toEqual([]);
    }
  });
});
