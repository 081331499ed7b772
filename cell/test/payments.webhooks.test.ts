import Stripe from 'stripe';
import { describe, expect } from 'vitest';
import type { Buyer } from '../../test/support/buyer';
import type { TestCell } from '../../test/support/cell';
import { startCellApiOn, startPgProxy } from '../../test/support/db-outage';
import { paymentsCellTest } from '../../test/support/fixtures';
import { eventually } from '../../test/support/kafka';
import { orderStatus } from '../../test/support/saga';
import {
  eventCounts,
  intentsFor,
  newWebhookSecret,
  payInBrowser,
  sendWebhooksTo,
  stripeApiEnv,
} from '../../test/support/stripe';
import { reconcileLostOrders } from '../src/reconciler/lost-orders';
import { reconcileOnce } from '../src/reconciler/reconcile';

const it = paymentsCellTest({ prefix: 'whk', seats: 40 });

// Each test adds the webhook endpoint it wants, if any (the one the cell registered at its start is
// removed here too: the workers start with the file's first test, whose hooks already need them).
it.beforeEach(({ emulator }) => {
  emulator.control.reset();
  for (const endpoint of emulator.control.webhookEndpoints()) emulator.control.removeWebhookEndpoint(endpoint.id);
});

/** The order's client secret as the page gets it: the intent exists and is recorded. */
const intentOf = (buyer: Buyer, orderId: string) =>
  eventually(async () => (await (await buyer.order(orderId)).json()).payment?.paymentIntentId as string, 'intent');

const statusIs = (cell: TestCell, orderId: string, status: string) => async () =>
  (await orderStatus(cell, orderId)) === status;
const sagaSawIntent = (cell: TestCell, orderId: string) => async () =>
  (
    await cell.db.query(
      `SELECT 1 FROM outbox o JOIN inbox i ON i.event_id = o.event_id AND i.consumer = 'saga'
        WHERE o.aggregate_id = $1 AND o.event_type = 'PaymentIntentCreated'`,
      [orderId],
    )
  ).length > 0;
const count = async (cell: TestCell, table: string) =>
  (await cell.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;

describe('the Stripe webhook endpoint', () => {
  it('refuses a forged, a stale or a missing signature with 400 and writes nothing', async ({
    cell,
    stripe,
    webhookSecret,
    hold,
  }) => {
    const { buyer, orderId } = await hold();
    const paymentIntentId = await intentOf(buyer, orderId);
    const intent = await stripe.paymentIntents.retrieve(paymentIntentId);
    const payload = JSON.stringify({
      id: 'evt_forged_1',
      object: 'event',
      type: 'payment_intent.amount_capturable_updated',
      data: { object: { ...intent, status: 'requires_capture', amount_capturable: intent.amount } },
    });
    const before = { events: await count(cell, 'stripe_events'), outbox: await count(cell, 'outbox') };
    const post = (signature?: string) =>
      fetch(`${cell.url}/webhooks/stripe`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(signature && { 'stripe-signature': signature }) },
        body: payload,
      });

    const forged = await post(Stripe.webhooks.generateTestHeaderString({ payload, secret: newWebhookSecret() }));
    const stale = await post(
      Stripe.webhooks.generateTestHeaderString({
        payload,
        secret: webhookSecret,
        timestamp: Math.floor(Date.now() / 1000) - 600,
      }),
    );
    const missing = await post();
    for (const res of [forged, stale, missing]) {
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.error.code).toMatch(/^(bad_request|validation_failed)$/);
      expect(body.error.requestId).toBeTruthy();
    }
    expect({ events: await count(cell, 'stripe_events'), outbox: await count(cell, 'outbox') }).toEqual(before);
    expect(await orderStatus(cell, orderId)).toBe('pending_payment');

    // Correctly signed but without the amount its saga event needs: 400 naming the field, nothing written.
    const { amount: _amount, ...withoutAmount } = intent;
    const incomplete = JSON.stringify({
      id: 'evt_incomplete_1',
      object: 'event',
      type: 'payment_intent.amount_capturable_updated',
      data: { object: { ...withoutAmount, status: 'requires_capture' } },
    });
    const refused = await fetch(`${cell.url}/webhooks/stripe`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: incomplete, secret: webhookSecret }),
      },
      body: incomplete,
    });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toMatchObject({
      code: 'validation_failed',
      details: { issues: [expect.objectContaining({ path: 'amount' })] },
    });
    expect({ events: await count(cell, 'stripe_events'), outbox: await count(cell, 'outbox') }).toEqual(before);

    // The same bytes signed with the endpoint's secret are accepted: the refusals were the signature's.
    const genuine = await post(Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret }));
    expect(genuine.status).toBe(200);
  });

  it('answers 5xx while its database is unreachable; Stripe’s retry later goes through', async ({
    identity,
    cell,
    emulator,
    stripe,
    webhookSecret,
    hold,
  }) => {
    const proxy = await startPgProxy(cell.db.url);
    const partitioned = await startCellApiOn(cell, identity, proxy.url, stripeApiEnv(emulator, webhookSecret));
    try {
      sendWebhooksTo(emulator, partitioned.url, webhookSecret);
      const { buyer, orderId } = await hold();
      await intentOf(buyer, orderId);
      proxy.down();
      const { paymentIntentId } = await payInBrowser(stripe, () => buyer.order(orderId), 'pm_card_visa');

      const failed = () =>
        emulator.control.webhookAttempts().filter((a) => a.eventType === 'payment_intent.amount_capturable_updated');
      await eventually(async () => failed().length >= 2, 'two refused deliveries');
      expect(failed().every((a) => a.outcome === 'failed' && (a.status ?? 0) >= 500)).toBe(true);
      expect(
        await cell.db.query('SELECT id FROM stripe_events WHERE payment_intent_id = $1', [paymentIntentId]),
      ).toEqual([]);
      expect(await orderStatus(cell, orderId)).toBe('pending_payment');

      proxy.up();
      await eventually(statusIs(cell, orderId, 'ticketed'), 'ticketed after the database came back');
      expect(failed().at(-1)?.outcome).toBe('delivered');
    } finally {
      await partitioned.close();
      await proxy.close();
    }
  });

  it('an intent not yet recorded is refused (404) so Stripe delivers again; another cell’s is acknowledged', async ({
    cellId,
    cell,
    event,
    emulator,
    stripe,
    webhookSecret,
  }) => {
    sendWebhooksTo(emulator, cell.url, webhookSecret);
    const strayOrder = '00000000-0000-4000-8000-000000000001';
    // Ours by its metadata but unknown here (the worker's commit is a moment behind Stripe's answer).
    const ours = await stripe.paymentIntents.create({
      amount: 5_000,
      currency: 'eur',
      capture_method: 'manual',
      metadata: { orderId: strayOrder, cellId, eventId: event.eventId },
    });
    const theirs = await stripe.paymentIntents.create({
      amount: 5_000,
      currency: 'eur',
      capture_method: 'manual',
      metadata: { orderId: strayOrder, cellId: 'another-cell', eventId: event.eventId },
    });
    await stripe.paymentIntents.confirm(ours.id, { payment_method: 'pm_card_visa' });
    await stripe.paymentIntents.confirm(theirs.id, { payment_method: 'pm_card_visa' });
    const attempts = () =>
      emulator.control.webhookAttempts().filter((a) => a.eventType === 'payment_intent.amount_capturable_updated');
    await eventually(async () => attempts().filter((a) => a.status === 404).length >= 2, 'refusals of ours');
    expect(attempts().filter((a) => a.status === 200)).toHaveLength(1);
    expect(await count(cell, 'stripe_events')).toBe(
      (await cell.db.query('SELECT 1 FROM stripe_events WHERE payment_intent_id <> ALL($1)', [[ours.id, theirs.id]]))
        .length,
    );
    await stripe.paymentIntents.cancel(ours.id);
    await stripe.paymentIntents.cancel(theirs.id);
  });

  it('webhooks out of order (succeeded before amount_capturable_updated): one capture, a legal end state', async ({
    cell,
    emulator,
    stripe,
    webhookSecret,
    workers,
    hold,
  }) => {
    sendWebhooksTo(emulator, cell.url, webhookSecret);
    const { buyer, orderId } = await hold();
    await intentOf(buyer, orderId);
    // From now on deliveries are held in pairs and sent in reverse.
    emulator.control.setWebhookFaults({ reorder: { batchSize: 2, order: 'reverse', windowMs: 30_000 } });
    const { paymentIntentId } = await payInBrowser(stripe, () => buyer.order(orderId), 'pm_card_visa');

    // The authorization webhook is held back; the reconciler sees the intent authorized at
    // Stripe and pushes the order forward, whose capture then releases both webhooks, reversed.
    await new Promise((r) => setTimeout(r, 300));
    expect(await orderStatus(cell, orderId)).toBe('pending_payment');
    const report = await reconcileOnce({ ctx: workers.ctx, stripe }, { graceMs: 0, batchSize: 100 });
    expect(report.fixed).toContainEqual({ kind: 'authorization_observed', orderId });

    await eventually(statusIs(cell, orderId, 'ticketed'), 'ticketed order');
    await emulator.control.waitForWebhooks(30_000);
    const sequence = emulator.control
      .webhookAttempts()
      .filter((a) => a.outcome === 'delivered' && a.eventType !== 'payment_intent.created')
      .map((a) => a.eventType);
    expect(sequence).toEqual(['payment_intent.succeeded', 'payment_intent.amount_capturable_updated']);
    expect(emulator.control.counters().captures).toBe(1);
    expect(intentsFor(emulator, orderId).map((pi) => pi.id)).toEqual([paymentIntentId]);
    expect(await eventCounts(cell, orderId)).toMatchObject({
      OrderConfirmed: 1,
      CaptureRequested: 1,
      TicketIssueRequested: 1,
    });
    expect(await orderStatus(cell, orderId)).toBe('ticketed');
  });
});

describe('the reconciler', () => {
  it('re-requests tickets for a paid order that was never ticketed, once per grace period', async ({
    cell,
    emulator,
    stripe,
    webhookSecret,
    workers,
    hold,
  }) => {
    sendWebhooksTo(emulator, cell.url, webhookSecret);
    const { buyer, orderId } = await hold();
    await payInBrowser(stripe, () => buyer.order(orderId), 'pm_card_visa');
    await eventually(statusIs(cell, orderId, 'ticketed'), 'ticketed order');
    // Lose the tickets' outcome: the order is paid, its ticket rows and TicketIssued gone.
    await cell.db.query('DELETE FROM tickets WHERE order_id = $1', [orderId]);
    await cell.db.query(`UPDATE orders SET status = 'paid', updated_at = now() - interval '1 hour' WHERE id = $1`, [
      orderId,
    ]);

    const report = await reconcileOnce({ ctx: workers.ctx, stripe }, { graceMs: 60_000, batchSize: 100 });
    expect(report.fixed).toContainEqual({ kind: 'ticketing_retried', orderId });
    await eventually(statusIs(cell, orderId, 'ticketed'), 'ticketed again');
    expect((await cell.db.query('SELECT 1 FROM tickets WHERE order_id = $1', [orderId])).length).toBe(1);
    const again = await reconcileOnce({ ctx: workers.ctx, stripe }, { graceMs: 60_000, batchSize: 100 });
    expect(again.fixed.filter((f) => f.orderId === orderId)).toEqual([]);
  });

  it('finds an intent Stripe has but the cell lost (by its metadata) and records it', async ({
    cell,
    emulator,
    stripe,
    workers,
    hold,
  }) => {
    const { buyer, orderId } = await hold();
    const paymentIntentId = await intentOf(buyer, orderId);
    // As if the worker's commit had been lost and its message dead-lettered.
    await cell.db.query('DELETE FROM payments WHERE order_id = $1', [orderId]);
    await cell.db.query(`UPDATE orders SET updated_at = now() - interval '1 hour' WHERE id = $1`, [orderId]);

    const report = await reconcileOnce({ ctx: workers.ctx, stripe }, { graceMs: 60_000, batchSize: 100 });
    expect(report.fixed).toContainEqual({ kind: 'intent_recorded', orderId });
    const view = await (await buyer.order(orderId)).json();
    expect(view.payment.paymentIntentId).toBe(paymentIntentId);
    expect(view.payment.clientSecret).toMatch(new RegExp(`^${paymentIntentId}_secret_`));
    expect(intentsFor(emulator, orderId)).toHaveLength(1);
  });

  it('asks again for the intent of a pending order that has none at Stripe (its request dead-lettered), and it is created once', async ({
    cell,
    emulator,
    stripe,
    workers,
    hold,
  }) => {
    // Stripe fails the request and every retry this file's schedule allows (1 + 2 short + 1 long): dead-lettered.
    emulator.control.injectFailures('payment_intents.create', 4);
    const { buyer, orderId } = await hold();
    await eventually(async () => emulator.control.pendingFailures().length === 0, 'every attempt failed');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(intentsFor(emulator, orderId)).toEqual([]);
    await cell.db.query(`UPDATE orders SET updated_at = now() - interval '1 hour' WHERE id = $1`, [orderId]);

    const report = await reconcileOnce({ ctx: workers.ctx, stripe }, { graceMs: 60_000, batchSize: 100 });
    expect(report.fixed).toContainEqual({ kind: 'intent_requested', orderId });
    const paymentIntentId = await intentOf(buyer, orderId);
    expect(intentsFor(emulator, orderId).map((pi) => pi.id)).toEqual([paymentIntentId]);
    // Asked once more (a second pass, or the first request's retry arriving late): still one intent.
    await cell.db.query(`UPDATE orders SET updated_at = now() - interval '1 hour' WHERE id = $1`, [orderId]);
    await cell.db.query('DELETE FROM payments WHERE order_id = $1', [orderId]);
    const again = await reconcileOnce({ ctx: workers.ctx, stripe }, { graceMs: 60_000, batchSize: 100 });
    expect(again.fixed).toContainEqual({ kind: 'intent_recorded', orderId });
    expect(intentsFor(emulator, orderId)).toHaveLength(1);
  });

  it('observes a capture whose webhook and event were lost, and refunds money taken for released seats', async ({
    cell,
    emulator,
    stripe,
    workers,
    hold,
  }) => {
    const { buyer, orderId } = await hold();
    const paymentIntentId = await intentOf(buyer, orderId);
    // No webhook endpoint: Stripe's news never arrives. The buyer pays; the seats are then released.
    await stripe.paymentIntents.confirm(paymentIntentId, { payment_method: 'pm_card_visa' });
    await stripe.paymentIntents.capture(paymentIntentId);
    await cell.db.query(`UPDATE orders SET status = 'released', updated_at = now() - interval '1 hour' WHERE id = $1`, [
      orderId,
    ]);
    await cell.db.query(`UPDATE holds SET status = 'released' WHERE order_id = $1`, [orderId]);
    await cell.db.query(
      `UPDATE hold_seats SET released_at = now() WHERE hold_id IN (SELECT id FROM holds WHERE order_id = $1)`,
      [orderId],
    );

    const report = await reconcileOnce({ ctx: workers.ctx, stripe }, { graceMs: 60_000, batchSize: 100 });
    expect(report.fixed).toContainEqual({ kind: 'captured_after_release', orderId });
    await eventually(statusIs(cell, orderId, 'refunded'), 'refunded order');
    expect(await cell.db.query('SELECT kind FROM incidents WHERE order_id = $1', [orderId])).toEqual([
      { kind: 'captured_after_release' },
    ]);
    expect(emulator.control.counters().refunds).toBe(1);
  });

  it('refunds or cancels every intent whose order the ledger lost (a failover under asynchronous replication), or that an order ended unpaid never recorded, once', async ({
    cell,
    emulator,
    stripe,
    webhookSecret,
    workers,
    hold,
  }) => {
    sendWebhooksTo(emulator, cell.url, webhookSecret);
    const captured = await hold();
    const { paymentIntentId: capturedIntent } = await payInBrowser(
      stripe,
      () => captured.buyer.order(captured.orderId),
      'pm_card_visa',
    );
    await eventually(statusIs(cell, captured.orderId, 'ticketed'), 'ticketed order');
    const open = await hold();
    const openIntent = await intentOf(open.buyer, open.orderId);
    const kept = await hold();
    await intentOf(kept.buyer, kept.orderId);
    // Kept by the promoted writer without its payment row, then released before anything found the intent again.
    const forgotten = await hold();
    const forgottenIntent = await intentOf(forgotten.buyer, forgotten.orderId);
    // The saga saw the intent while the order was live; had it seen it after the release, it would cancel it itself.
    await eventually(sagaSawIntent(cell, forgotten.orderId), 'the saga to take the intent in');
    await cell.db.query('DELETE FROM payments WHERE order_id = $1', [forgotten.orderId]);
    await cell.db.query(`UPDATE orders SET status = 'released' WHERE id = $1`, [forgotten.orderId]);
    // Kept without its payment row and still live: the order-driven pass adopts its intent, this one leaves it.
    const live = await hold();
    await intentOf(live.buyer, live.orderId);
    await cell.db.query('DELETE FROM payments WHERE order_id = $1', [live.orderId]);
    // The promoted replica never had these two orders: every row of theirs is gone, their intents are not.
    for (const orderId of [captured.orderId, open.orderId])
      await cell.db.query(
        `DO $$ BEGIN SET LOCAL session_replication_role = replica; DELETE FROM orders WHERE id = '${orderId}'; END $$`,
      );

    const report = await reconcileLostOrders({ ctx: workers.ctx, stripe }, { windowMs: 3_600_000, graceMs: 0 });
    expect(report.fixed).toEqual(
      expect.arrayContaining([
        { kind: 'lost_order_refunded', orderId: captured.orderId, paymentIntentId: capturedIntent },
        { kind: 'lost_order_canceled', orderId: open.orderId, paymentIntentId: openIntent },
        { kind: 'lost_order_canceled', orderId: forgotten.orderId, paymentIntentId: forgottenIntent },
      ]),
    );
    expect(report.fixed.map((f) => f.orderId)).not.toContain(kept.orderId);
    expect(report.fixed.map((f) => f.orderId)).not.toContain(live.orderId);
    expect((await stripe.paymentIntents.retrieve(openIntent)).status).toBe('canceled');
    expect((await stripe.paymentIntents.retrieve(forgottenIntent)).status).toBe('canceled');
    const refunds = await stripe.refunds.list({ payment_intent: capturedIntent });
    expect(refunds.data.reduce((sum, r) => sum + r.amount, 0)).toBe(
      (await stripe.paymentIntents.retrieve(capturedIntent)).amount_received,
    );
    const again = await reconcileLostOrders({ ctx: workers.ctx, stripe }, { windowMs: 3_600_000, graceMs: 0 });
    expect(again.fixed).toEqual([]);
    expect(emulator.control.counters().refunds).toBe(1);
  });
});
