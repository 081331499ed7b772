import { DatabaseAuthConfig, DatabaseUsersConfig, KafkaAuthConfig, RedisAuthConfig } from '@onsale/aws-auth';
import { TracingConfig } from '@onsale/contracts/runtime/tracing-config';
import { z } from 'zod';
import { checkMailerConfig, MailerConfig } from './notifications/mailer';
import { TicketStoreConfig } from './tickets/store';

const LogLevel = z.enum(['debug', 'info', 'warn', 'error']).default('info');

/** Settings every process of a cell shares: who it is, which epoch it writes as, its database. */
export const CellBaseConfig = z.object({
  CELL_ID: z.string().regex(/^[a-z0-9-]{1,32}$/, 'lowercase letters, digits and dashes'),
  CELL_EPOCH: z.coerce.number().int().positive().default(1),
  CELL_REGION: z.string().default('local'),
  DATABASE_URL: z.string().url(),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(20),
  LOG_LEVEL: LogLevel,
  ...DatabaseAuthConfig.shape,
  ...TracingConfig.shape,
});

export const CellApiConfig = CellBaseConfig.extend({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  /**
   * API processes sharing the port (node:cluster), one per core on a machine with several. Each has its own
   * DB_POOL_SIZE connections and serves its own /metrics. 1 where the platform runs one process per task.
   */
  API_PROCESSES: z.coerce.number().int().min(1).max(64).default(1),
  /**
   * How long a request waits for a database connection (a new one, or a free one of the pool) before it answers 503
   * store_unavailable: a frozen or restarting writer answers nothing, and a buyer is better told to retry than kept
   * waiting. Under the router's upstream time-out (5 s), so the cell's 503 and Retry-After reach the buyer.
   */
  DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(3_000),
  IDENTITY_JWKS_URL: z.string().url(),
  IDENTITY_ISSUER: z.string().min(1),
  IDENTITY_AUDIENCE: z.string().default('onsale:buyer'),
  ADMISSION_JWKS_URL: z.string().url(),
  JWKS_CACHE_MS: z.coerce.number().int().min(100).default(60_000),
  CELL_INTERNAL_TOKEN: z.string().min(16),
  REDIS_URL: z.string().url(),
  ...RedisAuthConfig.shape,
  /**
   * How long a Redis command (the admission check's revocation read) may go unanswered before the request answers 503:
   * a hung server otherwise holds every buyer until the router gives up on them (5 s). It runs from the command's
   * send to its reply being read, so a pause of this process's event loop counts against it too.
   */
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(50).max(10_000).default(500),
  AVAILABILITY_CACHE_MS: z.coerce.number().int().min(0).default(1_000),
  KAFKA_BROKERS: z.string().min(1),
  ...KafkaAuthConfig.shape,
  /**
   * The public halves of the ticket-signing keys (a JWKS) published for door scanners: every cell's signing key and
   * the retired ones whose tickets may still be scanned (runbooks/rotate-keys.md).
   */
  TICKET_PUBLIC_JWKS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (!v) return { keys: [] };
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON Web Key Set' });
        return z.NEVER;
      }
    })
    .pipe(z.object({ keys: z.array(z.looseObject({ kid: z.string().min(1), kty: z.string() })) })),
  /** The ticket worker's bucket: the API serves the order PDFs and the void lists stored there. */
  ...TicketStoreConfig.shape,
  /** Without these the cell answers Stripe's webhooks with 503 (Stripe retries) instead of guessing. */
  STRIPE_WEBHOOK_SECRET: z.string().startsWith('whsec_').optional(),
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_API_BASE: z.string().url().optional(),
});
export type CellApiConfig = z.infer<typeof CellApiConfig>;

/** Every worker of a cell talks to its database and its broker. */
export const CellWorkerConfig = CellBaseConfig.extend({
  KAFKA_BROKERS: z.string().min(1),
  ...KafkaAuthConfig.shape,
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(6_000).max(300_000).default(10_000),
  KAFKA_HEARTBEAT_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
  KAFKA_REBALANCE_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(30_000),
  /** Where the worker answers /healthz (alive) and /readyz (in its group and working); unset: no listener. */
  HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  HEALTH_HOST: z.string().default('127.0.0.1'),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(50).default(5),
});
export type CellWorkerConfig = z.infer<typeof CellWorkerConfig>;

/** How a process reaches Stripe: the key, and (locally and in CI) the emulator's base URL. */
export const StripeConfig = z.object({
  STRIPE_SECRET_KEY: z.string().min(1),
  STRIPE_API_BASE: z.string().url().optional(),
  /** The SDK's own retries of connection failures and 409/5xx, each with the same idempotency key. */
  STRIPE_MAX_NETWORK_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  STRIPE_TIMEOUT_MS: z.coerce.number().int().min(100).default(20_000),
});
export type StripeConfig = z.infer<typeof StripeConfig>;

export const CellPaymentsConfig = CellWorkerConfig.extend(StripeConfig.shape);
export type CellPaymentsConfig = z.infer<typeof CellPaymentsConfig>;

/*
 * One schema per process role, each beside the others so the infrastructure can take every role's
 * variable names from here (processes/src/index.ts): a task definition that sets a name no schema
 * reads, or misses one a schema requires, fails synthesis.
 */
export const CellSagaConfig = CellWorkerConfig;

export const CellRelayConfig = CellWorkerConfig.extend({
  RELAY_BATCH_SIZE: z.coerce.number().int().min(1).max(5000).default(500),
  RELAY_LEASE_MS: z.coerce.number().int().min(1000).default(30_000),
  RELAY_IDLE_MS: z.coerce.number().int().min(1).default(20),
  // After 2 s without a fact: the first fact of a quiet spell waits up to this long (pnpm bench:idle).
  RELAY_QUIET_MS: z.coerce.number().int().min(1).default(200),
  RELAY_RETAIN_PUBLISHED_MS: z.coerce.number().int().min(0).default(3_600_000),
});

export const CellExpiryConfig = CellWorkerConfig.extend({
  EXPIRY_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(200),
  EXPIRY_INTERVAL_MS: z.coerce.number().int().min(10).default(1_000),
});

export const CellTicketConfig = CellWorkerConfig.extend({
  TICKET_SIGNING_KEY: z.string().min(1),
  ...TicketStoreConfig.shape,
});

export const CellNotificationsConfig = CellWorkerConfig.extend({
  ...MailerConfig.shape,
  /**
   * How long a sender's claim on a notice keeps other deliveries from sending it: past it, the claim is a sender that
   * died mid-way and the next delivery sends. Longer than a send can take (MAIL_TIMEOUT_MS per SMTP step).
   */
  NOTIFY_CLAIM_LEASE_MS: z.coerce.number().int().min(1_000).default(120_000),
}).superRefine(checkMailerConfig);

export const CellReconcilerConfig = CellPaymentsConfig.extend({
  RECONCILE_INTERVAL_MS: z.coerce.number().int().min(1_000).default(30_000),
  RECONCILE_GRACE_MS: z.coerce.number().int().min(0).default(120_000),
  RECONCILE_BATCH_SIZE: z.coerce.number().int().min(1).max(5_000).default(200),
  /** How far back the pass looks at Stripe for intents whose order the ledger lost (a failover's RPO window). */
  RECONCILE_LOST_ORDER_WINDOW_MS: z.coerce.number().int().min(60_000).default(86_400_000),
});

/** The one-off migration task: the ledger's schema, the cell's epoch row, and the per-role database users. */
export const CellMigrateConfig = CellBaseConfig.pick({
  CELL_ID: true,
  CELL_EPOCH: true,
  DATABASE_URL: true,
  DATABASE_AUTH: true,
  DATABASE_PASSWORD: true,
  AWS_REGION: true,
  LOG_LEVEL: true,
})
  .extend(DatabaseUsersConfig.shape)
  .extend(TracingConfig.shape);

/**
 * The one-off topic provisioning task. The defaults suit the single local broker; a deployed cell's task
 * sets both from its manifest (replication 3 over a min ISR of 2, so acks=all survives one broker).
 */
export const CellProvisionConfig = z.object({
  CELL_ID: z.string().min(1),
  KAFKA_BROKERS: z.string().min(1),
  ...KafkaAuthConfig.shape,
  KAFKA_PARTITIONS: z.coerce.number().int().min(1).max(256).default(6),
  KAFKA_REPLICATION_FACTOR: z.coerce.number().int().min(1).max(5).default(1),
  ...TracingConfig.shape,
});

/**
 * The one-off dead-letter replay (cell/src/ops/replay-dlq.ts, runbooks/replay-dead-letters.md): the cell's broker,
 * signed in to as the services are (MSK IAM over TLS on AWS), and which dead letters to replay.
 */
export const CellReplayDeadLettersConfig = z.object({
  CELL_ID: z.string().min(1),
  KAFKA_BROKERS: z.string().min(1),
  ...KafkaAuthConfig.shape,
  /** Only dead letters of this consumer (saga, tickets, payments); all when unset. */
  DLQ_CONSUMER: z.string().min(1).optional(),
  /** `1`: list what would be replayed, with a throwaway consumer group, and publish nothing. */
  DRY_RUN: z.enum(['0', '1']).default('0'),
  LOG_LEVEL: LogLevel,
  ...TracingConfig.shape,
});
