import type Stripe from 'stripe';
import type { CellContext } from '../context';

export interface PaymentDeps {
  ctx: CellContext;
  stripe: Stripe;
}

/** Recorded nothing: the call had nothing to do, and the inbox row alone commits. */
export const nothingToRecord = async () => {};
