import type { TypedEnvelope } from '@onsale/contracts';
import type Stripe from 'stripe';
import { PermanentError } from '../errors';
import { failpoint } from '../failpoints';
import type { Handler } from '../messaging/consumer-runner';
import { appendEvent } from '../outbox/append';
import type { PaymentDeps } from './deps';
import { latestRefund, refundIntent } from './stripe-calls';
import { isRefusal, rethrowStripe, stripeReason } from './stripe-errors';

/**
 * Gives captured money back (a capture that landed after the seats were released). One refund
 * per order, by the order's key; a refund found already made (the key expired, or an operator
 * refunded by hand) is reported as it is. A refund is a forward action, never a rollback.
 */
export async function refundPayment(
  { ctx, stripe }: PaymentDeps,
  event: TypedEnvelope<'RefundRequested'>,
): Promise<Handler<'RefundRequested'>> {
  const { orderId, paymentIntentId, amount } = event.payload;
  let refund: Stripe.Refund | undefined;
  try {
    refund = await refundIntent(stripe, { paymentIntentId, orderId, cellId: ctx.cellId, amount });
    failpoint('payments.after-stripe');
  } catch (err) {
    if (!(isRefusal(err) && err.code === 'charge_already_refunded')) rethrowStripe(err, 'refund');
    refund = await latestRefund(stripe, paymentIntentId);
    if (!refund) throw new PermanentError(`refund: ${stripeReason(err)} but no refund found for ${paymentIntentId}`);
  }
  if (refund.status === 'failed' || refund.status === 'canceled') {
    throw new PermanentError(`refund ${refund.id} for order ${orderId} is ${refund.status}`);
  }
  const refundId = refund.id;
  return async (tx, _event, cause) => {
    await appendEvent(tx, cause, 'Refunded', orderId, { orderId, paymentIntentId, refundId });
  };
}
