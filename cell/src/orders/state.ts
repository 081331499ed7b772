import type { OrderStatus } from '@onsale/contracts';
import { PermanentError } from '../errors';

/**
 * The order's life as the brief draws it. Every status change goes through `assertTransition`,
 * so a handler that would move an order backwards (a late or replayed message) fails loudly
 * instead of rewriting history.
 */
const TRANSITIONS: { readonly [From in OrderStatus]: readonly OrderStatus[] } = {
  pending_payment: ['confirmed', 'expired', 'released', 'failed', 'canceled'],
  // A cancelled event: unpaid orders are cancelled; money taken (or being taken) is refunded.
  confirmed: ['paid', 'failed', 'refunding'],
  paid: ['ticketed', 'refunding'],
  ticketed: ['refunding'],
  // A capture that lands after the seats went back to sale is refunded, never kept.
  expired: ['refunding'],
  released: ['refunding'],
  failed: ['refunding'],
  canceled: ['refunding'],
  refunding: ['refunded'],
  refunded: [],
};

/** The order ended without the buyer's money being kept: its seats are back on sale. */
export const ENDED_UNPAID: ReadonlySet<OrderStatus> = new Set(['expired', 'released', 'failed', 'canceled']);

export function assertTransition(orderId: string, from: OrderStatus, to: OrderStatus): void {
  if (!TRANSITIONS[from].includes(to)) {
    throw new PermanentError(`order ${orderId} cannot go from ${from} to ${to}`);
  }
}
