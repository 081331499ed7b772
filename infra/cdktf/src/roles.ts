import { consumerGroupId } from '@onsale/cell/messaging/consumers';
import { CELL_ROLES as CELL_WORKERS } from '@onsale/cell/runtime/roles';
import type { ProcessName } from '@onsale/processes';
import { AppMetric, type AppMetricName } from './metrics';

export type TopicKey = 'purchase' | 'retryShort' | 'retryLong' | 'deadLetter';

/** Mirrors contracts/src/topics.ts; the infrastructure does not import application code. */
export function cellTopics(cellId: string): Record<TopicKey, string> {
  return {
    purchase: `cell.${cellId}.purchase`,
    retryShort: `cell.${cellId}.purchase.retry.short`,
    retryLong: `cell.${cellId}.purchase.retry.long`,
    deadLetter: `cell.${cellId}.purchase.dlq`,
  };
}

/** Every topic of a cell starts with this, so one pattern selects the cell's streams. */
export function cellStreamPrefix(cellId: string): string {
  return `cell.${cellId}.`;
}

/** The application's own group names (cell/src/messaging/consumers.ts): `<cell>.<consumer>`. */
export function consumerGroup(cellId: string, consumer: string): string {
  return consumerGroupId(cellId, consumer);
}

/** Every consumer group of a cell starts with this. */
export function cellGroupPrefix(cellId: string): string {
  return consumerGroup(cellId, '');
}

export type Scaling =
  | { readonly kind: 'requests'; readonly requestsPerTaskPerMinute: number }
  /** Target tracking on the consumer group's MaxOffsetLag; never more tasks than partitions. */
  /** Target messages behind (the group's own `onsale_consumer_lag`). */
  | { readonly kind: 'consumer-lag'; readonly maxLag: number }
  | { readonly kind: 'cell-metric'; readonly metric: AppMetricName; readonly target: number }
  | { readonly kind: 'fixed' };

export interface KafkaAccess {
  /** The consumer (cell/src/messaging/consumers.ts) whose group the role joins, when it reads. */
  readonly consumer?: string;
  readonly reads: readonly TopicKey[];
  readonly writes: readonly TopicKey[];
  readonly idempotentProducer: boolean;
  /**
   * Reads the committed offsets of every consumer group of the cell and the end offsets of these topics
   * (the API's lag and dead-letter depth signals: kafkajs' fetchOffsets and fetchTopicOffsets).
   */
  readonly describes?: { readonly groups: true; readonly topics: readonly TopicKey[] };
}

export interface ServiceSizing {
  readonly min: number;
  readonly max: number;
  readonly cpu: number;
  readonly memory: number;
}

export interface ProcessRole {
  /** The process the role's tasks run (@onsale/processes). */
  readonly process: ProcessName;
  /** Served behind the stack's internal load balancer. */
  readonly http?: { readonly port: number; readonly healthPath: string };
  readonly kafka?: KafkaAccess;
  /** Environment variables filled from Secrets Manager, each a secret only this role may read. */
  readonly secrets: readonly string[];
  readonly redis: boolean;
  readonly scaling: Scaling;
  readonly defaults: ServiceSizing;
}

// /readyz, not /healthz: a fenced writer or a lost database turns it 503, and the ALB stops sending buyers.
const HTTP = { port: 8080, healthPath: '/readyz' } as const;

/** The consumer's name comes from the application's catalog, so alarms and scaling watch the group it joins. */
const consumer = (name: string): KafkaAccess => ({
  consumer: name,
  reads: ['purchase', 'retryShort', 'retryLong'],
  // A consumer parks a failing message on a retry topic, and a permanently failing one on the DLQ.
  writes: ['retryShort', 'retryLong', 'deadLetter'],
  idempotentProducer: true,
});
/** Every worker process opens a broker client; one that publishes nothing needs only to connect. */
const CONNECT_ONLY: KafkaAccess = { reads: [], writes: [], idempotentProducer: false };

const CONSUMER_LAG: Scaling = { kind: 'consumer-lag', maxLag: 1_000 };

export const CELL_ROLES = {
  api: {
    process: 'cell-api',
    http: HTTP,
    // Only to read consumer lag (every group, every topic it consumes) and the DLQ's depth; the API never publishes.
    kafka: {
      reads: [],
      writes: [],
      idempotentProducer: false,
      describes: { groups: true, topics: ['purchase', 'retryShort', 'retryLong', 'deadLetter'] },
    },
    secrets: ['STRIPE_WEBHOOK_SECRET', 'STRIPE_SECRET_KEY', 'CELL_INTERNAL_TOKEN'],
    redis: true,
    scaling: { kind: 'requests', requestsPerTaskPerMinute: 6_000 },
    defaults: { min: 3, max: 30, cpu: 1024, memory: 2048 },
  },
  'outbox-relay': {
    process: 'cell-relay',
    kafka: { reads: [], writes: ['purchase'], idempotentProducer: true },
    secrets: [],
    redis: false,
    scaling: { kind: 'cell-metric', metric: AppMetric.outboxOldestAge, target: 2 },
    defaults: { min: 2, max: 6, cpu: 512, memory: 1024 },
  },
  saga: {
    process: 'cell-saga',
    kafka: consumer(CELL_WORKERS.saga.consumer),
    secrets: [],
    redis: false,
    scaling: CONSUMER_LAG,
    defaults: { min: 2, max: 12, cpu: 512, memory: 1024 },
  },
  payment: {
    process: 'cell-payments',
    kafka: consumer(CELL_WORKERS.payments.consumer),
    secrets: ['STRIPE_SECRET_KEY'],
    redis: false,
    scaling: CONSUMER_LAG,
    defaults: { min: 2, max: 12, cpu: 512, memory: 1024 },
  },
  expiry: {
    process: 'cell-expiry',
    kafka: CONNECT_ONLY,
    secrets: [],
    redis: false,
    // Fixed at `min`: the catalog has no expiry-delay metric, and the cell's active holds (a cell-wide gauge)
    // do not fall as tasks are added, which target tracking needs. The sweep is one indexed query a tick.
    scaling: { kind: 'fixed' },
    defaults: { min: 2, max: 4, cpu: 512, memory: 1024 },
  },
  ticket: {
    process: 'cell-tickets',
    kafka: consumer(CELL_WORKERS.tickets.consumer),
    secrets: ['TICKET_SIGNING_KEY'],
    redis: false,
    scaling: CONSUMER_LAG,
    defaults: { min: 2, max: 12, cpu: 512, memory: 1024 },
  },
  reconciler: {
    process: 'cell-reconciler',
    kafka: CONNECT_ONLY,
    secrets: ['STRIPE_SECRET_KEY'],
    redis: false,
    scaling: { kind: 'fixed' },
    defaults: { min: 2, max: 2, cpu: 512, memory: 1024 },
  },
  // Buyers' mail through SES's API with the task role (no SMTP password): see CellRuntime's mail sender.
  notifier: {
    process: 'cell-notifications',
    kafka: consumer(CELL_WORKERS.notifications.consumer),
    secrets: [],
    redis: false,
    scaling: CONSUMER_LAG,
    defaults: { min: 2, max: 6, cpu: 512, memory: 1024 },
  },
} as const satisfies Record<string, ProcessRole>;

export type CellRole = keyof typeof CELL_ROLES;
export const CELL_ROLE_NAMES = Object.keys(CELL_ROLES) as CellRole[];

/** The KEK and, during a rotation, the KEKs it replaced ("none" when no rotation is under way). */
export const KEK_SECRETS = ['SIGNING_KEY_KEK', 'SIGNING_KEY_KEK_PREVIOUS'] as const;

/** The consumer group a cell role's tasks join, if they consume: what its lag alarm and scaling watch. */
export function roleConsumerGroup(cellId: string, role: CellRole): string | undefined {
  const name = (CELL_ROLES[role] as ProcessRole).kafka?.consumer;
  return name ? consumerGroup(cellId, name) : undefined;
}

export const CONTROL_PLANE_ROLES = {
  api: {
    process: 'control-plane-api',
    // Its /healthz is a readiness check (database and Redis answer); it has no /readyz.
    http: { port: HTTP.port, healthPath: '/healthz' },
    secrets: ['CELL_INTERNAL_TOKEN', ...KEK_SECRETS],
    redis: true,
    scaling: { kind: 'requests', requestsPerTaskPerMinute: 6_000 },
    defaults: { min: 2, max: 10, cpu: 1024, memory: 2048 },
  },
  // The waiting room and its release controller: one process, leader-elected inside the application.
  'waiting-room': {
    process: 'control-plane-worker',
    secrets: ['CELL_INTERNAL_TOKEN', ...KEK_SECRETS],
    redis: true,
    scaling: { kind: 'fixed' },
    defaults: { min: 2, max: 2, cpu: 1024, memory: 2048 },
  },
  // The control plane's outbox to its facts topic, on the control plane's own MSK cluster.
  'fact-relay': {
    process: 'control-plane-fact-relay',
    secrets: [],
    redis: false,
    scaling: { kind: 'fixed' },
    defaults: { min: 2, max: 2, cpu: 512, memory: 1024 },
  },
  reporting: {
    process: 'reporting',
    secrets: [],
    redis: false,
    scaling: { kind: 'fixed' },
    defaults: { min: 2, max: 2, cpu: 512, memory: 1024 },
  },
  router: {
    process: 'router',
    http: HTTP,
    secrets: [],
    redis: false,
    scaling: { kind: 'requests', requestsPerTaskPerMinute: 12_000 },
    defaults: { min: 3, max: 40, cpu: 1024, memory: 2048 },
  },
} as const satisfies Record<string, ProcessRole>;

export type ControlPlaneRole = keyof typeof CONTROL_PLANE_ROLES;
export const CONTROL_PLANE_ROLE_NAMES = Object.keys(CONTROL_PLANE_ROLES) as ControlPlaneRole[];

/** Each role connects to PostgreSQL as its own IAM-authenticated user (created by the cell's migrations). */
export function databaseUser(role: string): string {
  return `onsale_${role.replaceAll('-', '_')}`;
}
