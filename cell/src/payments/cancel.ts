import type { TypedEnvelope } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type Stripe from 'stripe';
import { PermanentError } from '../errors';
import { failpoint } from '../failpoints';
import type { Handler } from '../messaging/consumer-runner';
import { appendEvent } from '../outbox/append';
import { nothingToRecord, type PaymentDeps } from './deps';
import { cancelIntent } from './stripe-calls';
import { intentAfterRefusal, isRefusal, rethrowStripe } from './stripe-errors';

/**
 * Releases an authorization the order can no longer use (hold expired, capture failed, money
 * arrived late). An intent already canceled is the success we wanted. An intent that was
 * captured cannot be canceled: that is reported as PaymentCaptured, and the saga, seeing an
 * order that ended unpaid, records the incident and asks for the refund.
 */
export async function cancelAuthorization(
  { ctx, stripe }: PaymentDeps,
  event: TypedEnvelope<'AuthorizationCancelRequested'>,
): Promise<Handler<'AuthorizationCancelRequested'>> {
  const { orderId } = event.payload;
  const paymentIntentId = event.payload.paymentIntentId ?? (await recordedIntent(ctx.db, orderId));
  // No intent yet: if one is created later, the saga asks for its cancellation then.
  if (!paymentIntentId) return nothingToRecord;

  let intent: Stripe.PaymentIntent;
  try {
    intent = await cancelIntent(stripe, paymentIntentId, orderId);
    failpoint('payments.after-stripe');
  } catch (err) {
    if (!isRefusal(err)) rethrowStripe(err, 'cancel');
    intent = await intentAfterRefusal(stripe, err, paymentIntentId);
  }

  if (intent.status === 'processing') {
    // The network is still deciding; once it has, the intent is cancelable or captured.
    throw new Error(`intent ${paymentIntentId} is processing; cancel later`);
  }
  if (intent.status !== 'canceled' && intent.status !== 'succeeded') {
    throw new PermanentError(`intent ${paymentIntentId} could not be canceled from ${intent.status}`);
  }
  return async (tx, _event, cause) => {
    if (intent.status === 'canceled') {
      await appendEvent(tx, cause, 'AuthorizationCanceled', orderId, { orderId, paymentIntentId });
      return;
    }
    await appendEvent(tx, cause, 'PaymentCaptured', orderId, {
      orderId,
      paymentIntentId,
      amount: intent.amount_received,
    });
  };
}

async function recordedIntent(db: PaymentDeps['ctx']['db'], orderId: string): Promise<string | undefined> {
  const rows = await db.execute<{ payment_intent_id: string }>(
    sql`SELECT payment_intent_id FROM payments WHERE order_id = ${orderId}`,
  );
  return rows.rows[0]?.payment_intent_id;
}
