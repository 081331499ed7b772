/**
 * Ways webhook delivery can misbehave, all of which real Stripe delivery exhibits at times:
 * events arrive more than once, late, out of order, or only after a retry.
 */
export interface WebhookFaults {
  /** Send each event to each endpoint this many times (same event id, independent deliveries). */
  duplicates: number;
  /** Hold every delivery this long before its first attempt. */
  delayMs: number;
  /**
   * Collect deliveries into batches of `batchSize` (or whatever arrived within `windowMs` of
   * the first one) and send each batch in reverse or shuffled order, one after another.
   */
  reorder: { batchSize: number; order: 'reverse' | 'shuffle'; windowMs: number } | null;
  /** Count the first attempt of every delivery as failed without sending it, so a retry delivers. */
  dropFirstAttempt: boolean;
}

export const NO_WEBHOOK_FAULTS: WebhookFaults = {
  duplicates: 1,
  delayMs: 0,
  reorder: null,
  dropFirstAttempt: false,
};
