import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The platform's metrics: one catalog, so every process exposes the same names and labels and
 * the alert rules, the dashboards and the AWS alarms can rely on them. Labels are bounded by
 * design: route patterns (not paths), event ids (a cell sells tens of events), reasons and
 * states from closed lists. No label ever carries an order, user, seat or hold id.
 */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.8, 1, 2.5, 5, 10];

function catalog(registry: Registry) {
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Gauge<L>({ name, help, labelNames, registers: [registry] });
  const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Histogram<L>({ name, help, labelNames, buckets: LATENCY_BUCKETS, registers: [registry] });
  return {
    httpRequests: counter(
      'onsale_http_requests_total',
      'HTTP requests answered, by route pattern, method and status.',
      ['route', 'method', 'status'],
    ),
    httpDuration: histogram('onsale_http_request_duration_seconds', 'HTTP request latency by route pattern.', [
      'route',
      'method',
    ]),

    holdsPlaced: counter('onsale_holds_placed_total', 'Holds committed.', ['event']),
    holdsRefused: counter('onsale_holds_refused_total', 'Hold requests refused, by reason (error code).', [
      'event',
      'reason',
    ]),
    holdTransaction: histogram('onsale_hold_transaction_seconds', 'Duration of the hold transaction.'),
    txRetries: counter(
      'onsale_tx_retries_total',
      'Write transactions PostgreSQL aborted for concurrency and the writer ran again (reason: deadlock, serialization).',
      ['reason'],
    ),
    txContentionGiveUps: counter(
      'onsale_tx_contention_give_ups_total',
      'Write transactions still aborted for concurrency after every attempt (answered 503), by reason.',
      ['reason'],
    ),
    activeHolds: gauge('onsale_active_holds', 'Holds currently active in the cell.'),
    ready: gauge('onsale_ready', '1 while the process can do its job (a cell API: write as its epoch).'),
    seatsAvailable: gauge('onsale_seats_available', 'Seats still on sale, per event.', ['event']),

    outboxWaiting: gauge('onsale_outbox_waiting', 'Outbox rows not yet published.'),
    outboxOldestAge: gauge(
      'onsale_outbox_oldest_unpublished_age_seconds',
      'Age of the oldest unpublished outbox row: the business event-delivery latency.',
    ),
    relayPublished: counter('onsale_relay_published_total', 'Outbox rows published to Kafka.'),
    relayBatch: histogram('onsale_relay_batch_seconds', 'Claim, publish and mark of one relay batch.'),
    consumerLag: gauge('onsale_consumer_lag', 'Messages a consumer group has not committed past.', ['group']),
    consumerReady: gauge('onsale_consumer_ready', '1 while the consumer is in its group and fetching.', ['group']),
    consumerRejoins: counter('onsale_consumer_rejoins_total', 'Fresh members after the group dropped this one.', [
      'group',
    ]),
    inboxDuplicates: counter('onsale_inbox_duplicates_total', 'Messages skipped because their effect was applied.', [
      'consumer',
    ]),
    retries: counter('onsale_consumer_retries_total', 'Messages sent to a retry topic.', ['consumer', 'topic']),
    deadLettered: counter('onsale_dlq_arrivals_total', 'Messages dead-lettered, by reason.', ['consumer', 'reason']),
    dlqDepth: gauge('onsale_dlq_depth', 'Messages in the cell dead-letter topic.'),

    orderTransitions: counter('onsale_order_transitions_total', 'Order status changes.', ['from', 'to']),
    stripeCalls: counter('onsale_stripe_calls_total', 'Stripe API calls by operation and outcome.', [
      'operation',
      'outcome',
    ]),
    webhooks: counter('onsale_webhooks_total', 'Stripe webhook deliveries, verified or refused by reason.', [
      'outcome',
    ]),
    compensations: counter('onsale_compensations_total', 'Compensations requested (cancel, refund).', ['kind']),
    reconcilerActions: counter('onsale_reconciler_actions_total', 'Stuck orders pushed forward.', ['kind']),
    oversell: counter(
      'onsale_oversell_total',
      'Ticket uniqueness violations: a seat sold twice was refused by the database. Must stay 0.',
    ),

    queueDepth: gauge('onsale_queue_depth', 'Buyers waiting in the room.', ['event']),
    queueJoins: counter('onsale_queue_joins_total', 'Buyers who joined the room.', ['event']),
    admitted: counter('onsale_admitted_total', 'Buyers released from the room.', ['event']),
    releaseRate: gauge('onsale_release_rate', 'Release rate R (buyers per second) per event.', ['event']),
    releaseRateFloor: gauge('onsale_release_rate_floor', 'The lowest R the promoter allows, per event.', ['event']),
    controllerDecisions: counter('onsale_controller_decisions_total', 'Release controller decisions.', [
      'event',
      'decision',
    ]),
    admissionTokens: counter('onsale_admission_tokens_total', 'Admission tokens minted, refused or revoked.', [
      'outcome',
    ]),
    powChallenges: counter(
      'onsale_pow_challenges_total',
      'Proof-of-work challenges at the waiting room door: issued, solved (a join spent one) or refused.',
      ['event', 'outcome'],
    ),
    powRefusals: counter('onsale_pow_refusals_total', 'Joins refused for their proof of work, by reason.', [
      'event',
      'reason',
    ]),
    dpopProofs: counter(
      'onsale_dpop_proofs_total',
      'DPoP proofs checked on requests carrying a device-bound admission token: accepted, or the refusal reason.',
      ['outcome'],
    ),
    signingKeyFailures: counter(
      'onsale_signing_key_failures_total',
      'Signing keys that could not be found or opened (reason: missing, sealed).',
      ['reason'],
    ),
  };
}

const registry = new Registry();

/**
 * The process's metrics. One process is one role of one cell (or of the control plane), so one
 * registry per process, as prom-client intends: verbs deep in a transaction count without
 * carrying a handle around.
 */
export const metrics = { ...catalog(registry), registry, render: () => registry.metrics() };
export type Metrics = typeof metrics;

/** Called once at start: every series of this process carries its role and cell. */
export function labelProcessMetrics(labels: { role: string; cell?: string }): void {
  registry.setDefaultLabels({ role: labels.role, cell: labels.cell ?? 'control-plane' });
  // Tests run several roles in one process: the process-level collectors register once. The event loop's delay is
  // sampled every 100 ms, not prom-client's 10 ms: that timer alone woke an idle process 100 times a second, 4 ms of
  // CPU a second (an idle saga worker spent 7). 10 samples a second still give a 15 s scrape 150. An idle platform
  // (pnpm bench:idle, two runs each, side by side): 0.30 and 0.31 cores with 10 ms, 0.27 and 0.27 with 100 ms.
  if (!defaultsCollected) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  defaultsCollected = true;
}
let defaultsCollected = false;

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The router's own share of a request: tenths of a millisecond apart, where a proxy's cost lies. */
const ROUTER_OWN_BUCKETS = [0.0001, 0.0002, 0.0003, 0.0004, 0.0005, 0.00075, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25];

/** The directory copy a router routes with, as its metrics read it at each scrape (null before the first load). */
export type RouterDirectoryReading = () => { version: number; ageSeconds: number } | null;

/**
 * The edge router's metrics, labelled by upstream (`cell`: "cell-1", "control-plane"; "none" when the router
 * answered before choosing one). Label values come from the directory, a short list, so cardinality stays bounded.
 * A registry per router, apart from the process's: the router is no role of a cell or of the control plane, and
 * exposes these series only (no onsale_* series a scrape could take for a cell's).
 */
export function routerMetrics(directory: RouterDirectoryReading) {
  const registry = new Registry();
  const requests = new Counter({
    name: 'router_requests_total',
    help: 'Requests answered, by upstream and status class.',
    labelNames: ['cell', 'class'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'router_request_duration_seconds',
    help: 'Time from request to the end of the response, by upstream.',
    labelNames: ['cell'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const own = new Histogram({
    name: 'router_own_duration_seconds',
    help: "A forwarded request's time less its wait for the upstream's response head (what the router adds), by upstream.",
    labelNames: ['cell'],
    buckets: ROUTER_OWN_BUCKETS,
    registers: [registry],
  });
  const upstreamErrors = new Counter({
    name: 'router_upstream_errors_total',
    help: 'Upstream failures (unreachable, timeout, broken), by upstream.',
    labelNames: ['cell', 'reason'],
    registers: [registry],
  });
  const dpopProofs = new Counter({
    name: 'router_dpop_proofs_total',
    help: 'DPoP proofs checked on requests carrying a device-bound admission token: accepted, or the refusal reason.',
    labelNames: ['outcome'],
    registers: [registry],
  });
  new Gauge({
    name: 'router_directory_version',
    help: 'Version of the directory copy in use (-1 before the first load).',
    registers: [registry],
    collect() {
      this.set(directory()?.version ?? -1);
    },
  });
  new Gauge({
    name: 'router_directory_age_seconds',
    help: 'Seconds since the control plane last confirmed the directory copy.',
    registers: [registry],
    collect() {
      this.set(directory()?.ageSeconds ?? Number.NaN);
    },
  });
  return {
    /** A request answered, from its start to the end of its response. */
    observe(upstream: string, status: number, seconds: number): void {
      requests.inc({ cell: upstream, class: `${Math.floor(status / 100)}xx` });
      duration.observe({ cell: upstream }, seconds);
    },
    /**
     * A forwarded request's time less its wait for the upstream's response head: the router's own work (the token
     * check, routing, headers, forwarding) plus streaming the answer, which is what the router adds to a request.
     */
    observeOwn(upstream: string, seconds: number): void {
      own.observe({ cell: upstream }, seconds);
    },
    upstreamError(upstream: string, reason: 'unreachable' | 'timeout' | 'broken'): void {
      upstreamErrors.inc({ cell: upstream, reason });
    },
    dpopProof(outcome: string): void {
      dpopProofs.inc({ outcome });
    },
    render: () => registry.metrics(),
  };
}
export type RouterMetrics = ReturnType<typeof routerMetrics>;

/** Counts and times every request by its route pattern (unmatched paths share one label). */
export function httpMetrics(): MiddlewareHandler {
  return async (c, next) => {
    const end = metrics.httpDuration.startTimer();
    await next();
    const matched = routePath(c, -1);
    const route = !matched || matched === '/*' || matched === '*' ? 'unmatched' : matched;
    end({ route, method: c.req.method });
    metrics.httpRequests.inc({ route, method: c.req.method, status: String(c.res.status) });
  };
}
