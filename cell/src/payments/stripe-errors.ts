import Stripe from 'stripe';
import { PermanentError } from '../errors';

/**
 * Stripe said no to this request as made (a declined card, a wrong state, a bad parameter):
 * sending it again cannot succeed. Everything else Stripe raises (api_error, connection
 * failures, rate limits, 409 idempotency_key_in_use) is worth a delayed retry.
 */
export function isRefusal(
  err: unknown,
): err is Stripe.errors.StripeCardError | Stripe.errors.StripeInvalidRequestError {
  return err instanceof Stripe.errors.StripeCardError || err instanceof Stripe.errors.StripeInvalidRequestError;
}

/** Our mistake or our configuration (a reused key with other parameters, a revoked key): dead-letter it. */
function isMisuse(err: unknown): boolean {
  return (
    err instanceof Stripe.errors.StripeIdempotencyError ||
    err instanceof Stripe.errors.StripeAuthenticationError ||
    err instanceof Stripe.errors.StripePermissionError
  );
}

/** A short, secret-free description for DLQ headers and domain events (never the raw error). */
export function stripeReason(err: Stripe.errors.StripeError): string {
  return [err.type, err.code, err.decline_code].filter(Boolean).join(':');
}

/**
 * Rethrows a Stripe failure as the consumer runner understands it: misuse and unhandled
 * refusals go to the dead-letter topic, the rest is retried. Handlers first turn the
 * refusals they understand into domain events.
 */
export function rethrowStripe(err: unknown, what: string): never {
  if (isRefusal(err) || isMisuse(err)) {
    throw new PermanentError(`${what}: ${stripeReason(err as Stripe.errors.StripeError)}: ${(err as Error).message}`);
  }
  throw err;
}

/** The intent as Stripe reported it with a refusal, else as it is now. */
export async function intentAfterRefusal(
  stripe: Stripe,
  err: Stripe.errors.StripeError,
  paymentIntentId: string,
): Promise<Stripe.PaymentIntent> {
  return (err.payment_intent as Stripe.PaymentIntent | undefined) ?? stripe.paymentIntents.retrieve(paymentIntentId);
}
