import type { TypedEnvelope } from '@onsale/contracts';
import type Stripe from 'stripe';
import { failpoint } from '../failpoints';
import type { Handler } from '../messaging/consumer-runner';
import { appendEvent } from '../outbox/append';
import type { PaymentDeps } from './deps';
import { captureIntent } from './stripe-calls';
import { intentAfterRefusal, isRefusal, rethrowStripe, stripeReason } from './stripe-errors';

/**
 * Collects the authorized money once the order is confirmed. The key is the order's, so every
 * retry (ours, the SDK's, the reconciler's) is one capture. A refusal is a fact for the saga:
 * CaptureFailed (it releases the seats and fails the order), unless the intent turns out to be
 * captured already, which is PaymentCaptured.
 */
export async function capturePayment(
  { stripe }: PaymentDeps,
  event: TypedEnvelope<'CaptureRequested'>,
): Promise<Handler<'CaptureRequested'>> {
  const { orderId, paymentIntentId } = event.payload;
  let intent: Stripe.PaymentIntent;
  let refusal: string | null = null;
  try {
    intent = await captureIntent(stripe, paymentIntentId, orderId);
    failpoint('payments.after-stripe');
  } catch (err) {
    if (!isRefusal(err)) rethrowStripe(err, 'capture');
    intent = await intentAfterRefusal(stripe, err, paymentIntentId);
    refusal = stripeReason(err);
  }

  return async (tx, _event, cause) => {
    if (intent.status === 'succeeded') {
      await appendEvent(tx, cause, 'PaymentCaptured', orderId, {
        orderId,
        paymentIntentId,
        amount: intent.amount_received,
      });
      return;
    }
    await appendEvent(tx, cause, 'CaptureFailed', orderId, {
      orderId,
      paymentIntentId,
      reason: refusal ?? `intent ${intent.status}`,
    });
  };
}
