import type { CallFirstHandlers } from '../messaging/consumer-runner';
import { createPaymentIntent } from './authorize';
import { cancelAuthorization } from './cancel';
import { capturePayment } from './capture';
import type { PaymentDeps } from './deps';
import { refundPayment } from './refund';

/** The payment worker: each command calls Stripe first, then records the outcome with its inbox row. */
export function paymentHandlers(deps: PaymentDeps): CallFirstHandlers {
  return {
    PaymentAuthorizationRequested: { callFirst: (event) => createPaymentIntent(deps, event) },
    CaptureRequested: { callFirst: (event) => capturePayment(deps, event) },
    AuthorizationCancelRequested: { callFirst: (event) => cancelAuthorization(deps, event) },
    RefundRequested: { callFirst: (event) => refundPayment(deps, event) },
  };
}
