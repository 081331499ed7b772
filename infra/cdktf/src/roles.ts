import { CellMetric } from './metrics';

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

/** Every topic and consumer group of a cell starts with this, so one pattern selects the cell's streams. */
export function cellStreamPrefix(cellId: string): string {
  return `cell.${cellId}.`;
}

export function consumerGroup(cellId: string, role: string): string {
  return `${cellStreamPrefix(cellId)}${role}`;
}

export type Scaling =
  | { readonly kind: 'requests'; readonly requestsPerTaskPerMinute: number }
  /** Target tracking on the consumer group's MaxOffsetLag; never more tasks than partitions. */
  | { readonly kind: 'consumer-lag'; readonly maxOffsetLag: number }
  | { readonly kind: 'cell-metric'; readonly metric: string; readonly target: number }
  | { readonly kind: 'fixed' };

export interface KafkaAccess {
  /** Reading implies a consumer group of the role's own. */
  readonly reads: readonly TopicKey[];
  readonly writes: readonly TopicKey[];
  readonly idempotentProducer: boolean;
}

export interface ServiceSizing {
  readonly min: number;
  readonly max: number;
  readonly cpu: number;
  readonly memory: number;
}

export interface ProcessRole {
  /** Served behind the stack's internal load balancer. */
  readonly http?: { readonly port: number; readonly healthPath: string };
  readonly kafka?: KafkaAccess;
  /** Environment variables filled from Secrets Manager, each a secret only this role may read. */
  readonly secrets: readonly string[];
  readonly redis: boolean;
  readonly scaling: Scaling;
  readonly defaults: ServiceSizing;
}

const HTTP = { port: 8080, healthPath: '/healthz' } as const;

const CONSUMER: KafkaAccess = {
  reads: ['purchase', 'retryShort', 'retryLong'],
  // A consumer parks a failing message on a retry topic, and a permanently failing one on the DLQ.
  writes: ['retryShort', 'retryLong', 'deadLetter'],
  idempotentProducer: true,
};

const CONSUMER_LAG: Scaling = { kind: 'consumer-lag', maxOffsetLag: 1_000 };

export const CELL_ROLES = {
  api: {
    http: HTTP,
    secrets: ['STRIPE_WEBHOOK_SECRET', 'CELL_INTERNAL_TOKEN'],
    redis: true,
    scaling: { kind: 'requests', requestsPerTaskPerMinute: 6_000 },
    defaults: { min: 3, max: 30, cpu: 1024, memory: 2048 },
  },
  'outbox-relay': {
    kafka: { reads: [], writes: ['purchase'], idempotentProducer: true },
    secrets: [],
    redis: false,
    scaling: { kind: 'cell-metric', metric: CellMetric.outboxAge, target: 2 },
    defaults: { min: 2, max: 6, cpu: 512, memory: 1024 },
  },
  saga: {
    kafka: CONSUMER,
    secrets: [],
    redis: false,
    scaling: CONSUMER_LAG,
    defaults: { min: 2, max: 12, cpu: 512, memory: 1024 },
  },
  payment: {
    kafka: CONSUMER,
    secrets: ['STRIPE_API_KEY'],
    redis: false,
    scaling: CONSUMER_LAG,
    defaults: { min: 2, max: 12, cpu: 512, memory: 1024 },
  },
  expiry: {
    secrets: [],
    redis: false,
    scaling: { kind: 'cell-metric', metric: CellMetric.expiryDelay, target: 5 },
    defaults: { min: 2, max: 4, cpu: 512, memory: 1024 },
  },
  ticket: {
    kafka: CONSUMER,
    secrets: [],
    redis: false,
    scaling: CONSUMER_LAG,
    defaults: { min: 2, max: 12, cpu: 512, memory: 1024 },
  },
  reconciler: {
    // It reads the DLQ to report its depth; replaying it is an operator's act, not the reconciler's.
    kafka: { reads: ['deadLetter'], writes: [], idempotentProducer: false },
    secrets: ['STRIPE_API_KEY'],
    redis: false,
    scaling: { kind: 'fixed' },
    defaults: { min: 2, max: 2, cpu: 512, memory: 1024 },
  },
} as const satisfies Record<string, ProcessRole>;

export type CellRole = keyof typeof CELL_ROLES;
export const CELL_ROLE_NAMES = Object.keys(CELL_ROLES) as CellRole[];

export const CONTROL_PLANE_ROLES = {
  api: {
    http: HTTP,
    secrets: ['CELL_INTERNAL_TOKEN'],
    redis: true,
    scaling: { kind: 'requests', requestsPerTaskPerMinute: 6_000 },
    defaults: { min: 2, max: 10, cpu: 1024, memory: 2048 },
  },
  // The waiting room and its release controller: one process, leader-elected inside the application.
  'waiting-room': {
    secrets: ['CELL_INTERNAL_TOKEN'],
    redis: true,
    scaling: { kind: 'fixed' },
    defaults: { min: 2, max: 2, cpu: 1024, memory: 2048 },
  },
  reporting: {
    secrets: [],
    redis: false,
    scaling: { kind: 'fixed' },
    defaults: { min: 2, max: 2, cpu: 512, memory: 1024 },
  },
  router: {
    http: HTTP,
    secrets: [],
    redis: true,
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
