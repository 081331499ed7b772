import { sql } from 'drizzle-orm';
import type Stripe from 'stripe';
import type { Tx } from '../db/client';

/**
 * Records the order's intent with its client secret (only the order view reads it back).
 * Returns false when the order already has one. A failed query's message lists its
 * parameters, the secret among them, and failures end up in logs and retry headers: what
 * leaves here is the database's own error, which carries the code retries are decided by.
 */
export async function recordIntent(tx: Tx, orderId: string, intent: Stripe.PaymentIntent): Promise<boolean> {
  try {
    const inserted = await tx.execute(sql`
      INSERT INTO payments (order_id, payment_intent_id, status, amount, currency, client_secret)
      VALUES (${orderId}, ${intent.id}, ${intent.status}, ${intent.amount}, ${intent.currency}, ${intent.client_secret})
      ON CONFLICT (order_id) DO NOTHING`);
    return (inserted.rowCount ?? 0) > 0;
  } catch (err) {
    throw (err as { cause?: unknown }).cause ?? new Error(`recording intent ${intent.id} failed`);
  }
}
