/**
 * The application's Prometheus metrics (contracts/src/runtime/metrics.ts, one catalog for every process) as
 * the alarms and autoscaling policies here read them in CloudWatch. Each service task runs the AWS Distro
 * for OpenTelemetry collector beside the process (constructs/metrics-sidecar.ts): it scrapes the process's
 * own /metrics and writes CloudWatch embedded-metric-format records, so each metric keeps its Prometheus
 * name, counters arrive as per-interval deltas (read them with Sum), gauges as values (Maximum), histograms
 * as statistic sets (SampleCount, Sum, Min, Max, Average: no percentiles). The labels below become
 * dimensions. test/metrics-contract.test.ts matches every alarm and policy against the catalog itself.
 */
export const CELL_NAMESPACE = 'Onsale/Cell';
export const CONTROL_PLANE_NAMESPACE = 'Onsale/ControlPlane';

/** The process label every series carries (`labelProcessMetrics`): the cell id, or `control-plane`. */
export const CELL_DIMENSION = 'cell';

/** Names exactly as the catalog registers them. */
export const AppMetric = {
  /** Histogram: duration of the hold transaction (seconds). */
  holdTransaction: 'onsale_hold_transaction_seconds',
  holdsPlaced: 'onsale_holds_placed_total',
  /** Hold requests refused, by reason (seat taken, limits, fenced epoch...). */
  holdsRefused: 'onsale_holds_refused_total',
  /** Gauge: age of the oldest unpublished outbox row, the business's event-delivery latency. */
  outboxOldestAge: 'onsale_outbox_oldest_unpublished_age_seconds',
  /** Gauge per `group`: messages the consumer group has not committed past. */
  consumerLag: 'onsale_consumer_lag',
  /** Gauge: holds currently active in the cell (what the expiry worker sweeps). */
  activeHolds: 'onsale_active_holds',
  /** Counter: messages dead-lettered. */
  dlqArrivals: 'onsale_dlq_arrivals_total',
  /** Counter per `outcome`: Stripe webhook deliveries, verified or refused (`bad_signature`). */
  webhooks: 'onsale_webhooks_total',
  /** Counter: stuck orders the reconciler pushed forward. */
  reconcilerActions: 'onsale_reconciler_actions_total',
  /** Counter: a second ticket for a seat refused by the database. Must stay 0. */
  oversell: 'onsale_oversell_total',
  /** Gauge per event: buyers waiting in the room (control plane). */
  queueDepth: 'onsale_queue_depth',
} as const;
export type AppMetricName = (typeof AppMetric)[keyof typeof AppMetric];

/**
 * The dimension sets the collector publishes. A set naming a label a series lacks is skipped for it, so
 * `[cell, group]` only applies to per-group series and `[cell, outcome]` to per-outcome ones.
 */
export const METRIC_DIMENSION_SETS: readonly (readonly string[])[] = [
  [CELL_DIMENSION],
  [CELL_DIMENSION, 'group'],
  [CELL_DIMENSION, 'outcome'],
];
