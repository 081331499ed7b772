import type { TypedEnvelope } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import { PermanentError } from '../errors';
import { failpoint } from '../failpoints';
import type { Handler } from '../messaging/consumer-runner';
import { appendEvent } from '../outbox/append';
import { nothingToRecord, type PaymentDeps } from './deps';
import { recordIntent } from './record-intent';
import { createIntent } from './stripe-calls';
import { rethrowStripe } from './stripe-errors';

/**
 * Creates the order's PaymentIntent (manual capture) at Stripe, then records it with its
 * client secret and PaymentIntentCreated in one transaction. The idempotency key is the
 * order's, so a crash after Stripe answered and before the commit, or a request issued again,
 * replays to the same intent. The buyer confirms it in the browser; the webhook reports the authorization.
 */
export async function createPaymentIntent(
  { ctx, stripe }: PaymentDeps,
  event: TypedEnvelope<'PaymentAuthorizationRequested'>,
): Promise<Handler<'PaymentAuthorizationRequested'>> {
  const { orderId, amount, currency } = event.payload;
  const found = await ctx.db.execute<{ status: string; event_id: string; payment_intent_id: string | null }>(sql`
    SELECT o.status, o.event_id, p.payment_intent_id
      FROM orders o LEFT JOIN payments p ON p.order_id = o.id WHERE o.id = ${orderId}`);
  const order = found.rows[0];
  if (!order) throw new PermanentError(`order ${orderId} does not exist in this cell`);
  // One intent per order; and none for an order nobody can pay for any more.
  if (order.payment_intent_id || order.status !== 'pending_payment') {
    ctx.log.info('no intent created', { orderId, status: order.status, paymentIntentId: order.payment_intent_id });
    return nothingToRecord;
  }

  const intent = await createIntent(stripe, {
    amount,
    currency,
    metadata: { orderId, cellId: ctx.cellId, eventId: order.event_id },
  }).catch((err) => rethrowStripe(err, 'create payment intent'));
  failpoint('payments.after-stripe');

  return async (tx, _event, cause) => {
    if (!(await recordIntent(tx, orderId, intent))) return;
    await appendEvent(tx, cause, 'PaymentIntentCreated', orderId, {
      orderId,
      paymentIntentId: intent.id,
      amount: intent.amount,
    });
  };
}
