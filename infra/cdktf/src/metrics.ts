/**
 * Custom metrics the cell's processes publish, and which the alarms and autoscaling here read. This is a
 * contract with the application: a renamed metric silently disarms an alarm, so names live in one place.
 */
export const CELL_NAMESPACE = 'Onsale/Cell';
export const CELL_DIMENSION = 'CellId';

export const CellMetric = {
  /** Milliseconds from hold request to committed hold, one sample per request. */
  holdLatency: 'HoldLatencyMs',
  holdAttempts: 'HoldAttempts',
  /** Hold attempts refused because a requested seat was already held or sold. */
  holdConflicts: 'HoldConflicts',
  /** Transactions that waited on a row lock, from pg_locks sampling. */
  lockWaits: 'LockWaits',
  /** Age of the oldest outbox row not yet published: the business's event-delivery latency. */
  outboxAge: 'OutboxOldestUnpublishedAgeSeconds',
  /** How far past expires_at the oldest still-active expired hold is. */
  expiryDelay: 'ExpiryDelaySeconds',
  /** Messages in the dead-letter topic not yet replayed or discarded. */
  deadLetterDepth: 'DeadLetterDepth',
  /** Orders whose local payment state disagrees with Stripe after reconciliation. */
  paymentMismatches: 'PaymentMismatches',
  /** Attempts to issue a second ticket for a seat, refused by the unique index. Must stay 0. */
  ticketUniquenessViolations: 'TicketUniquenessViolations',
} as const;
