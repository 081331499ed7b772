import { z } from 'zod';

const LogLevel = z.enum(['debug', 'info', 'warn', 'error']).default('info');

/** Settings every process of a cell shares: who it is, which epoch it writes as, its database. */
export const CellBaseConfig = z.object({
  CELL_ID: z.string().regex(/^[a-z0-9-]{1,32}$/, 'lowercase letters, digits and dashes'),
  CELL_EPOCH: z.coerce.number().int().positive().default(1),
  CELL_REGION: z.string().default('local'),
  DATABASE_URL: z.string().url(),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(20),
  LOG_LEVEL: LogLevel,
});

export const CellApiConfig = CellBaseConfig.extend({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  IDENTITY_JWKS_URL: z.string().url(),
  IDENTITY_ISSUER: z.string().min(1),
  IDENTITY_AUDIENCE: z.string().default('onsale:buyer'),
  ADMISSION_JWKS_URL: z.string().url(),
  JWKS_CACHE_MS: z.coerce.number().int().min(100).default(60_000),
  CELL_INTERNAL_TOKEN: z.string().min(16),
  REDIS_URL: z.string().url(),
  AVAILABILITY_CACHE_MS: z.coerce.number().int().min(0).default(1_000),
  KAFKA_BROKERS: z.string().min(1),
  /** The public half of the ticket-signing key (a JWKS), published for gate scanners. */
  TICKET_PUBLIC_JWKS: z.string().optional(),
  /** Without these the cell answers Stripe's webhooks with 503 (Stripe retries) instead of guessing. */
  STRIPE_WEBHOOK_SECRET: z.string().startsWith('whsec_').optional(),
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_API_BASE: z.string().url().optional(),
});
export type CellApiConfig = z.infer<typeof CellApiConfig>;

/** Every worker of a cell talks to its database and its broker. */
export const CellWorkerConfig = CellBaseConfig.extend({
  KAFKA_BROKERS: z.string().min(1),
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
