import { DatabaseAuthConfig, DatabaseUsersConfig, KafkaAuthConfig, RedisAuthConfig } from '@onsale/aws-auth';
import { CONTROL_PLANE_MAX_BODY_BYTES, parseEnv } from '@onsale/contracts';
import { TracingConfig } from '@onsale/contracts/runtime/tracing-config';
import { z } from 'zod';
import { ConsoleConfigSchema } from './console/config';
import { PrewarmConfig } from './prewarm/config';
import { ShopConfigSchema } from './shop/config';

const bool = z
  .enum(['true', 'false', '1', '0'])
  .default('false')
  .transform((v) => v === 'true' || v === '1');
const int = (def: number) => z.coerce.number().int().positive().default(def);
const num = (def: number) => z.coerce.number().positive().default(def);

const kek = z.string().refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes, base64-encoded');

/** The key-encryption keys protecting admission signing keys at rest (runbooks/rotate-keys.md rotates them). */
const KekConfig = z.object({
  /** Seals new signing keys and opens them (base64, 32 bytes). */
  SIGNING_KEY_KEK: kek,
  /** During a KEK rotation only: the KEKs it replaced (comma-separated), still opening keys not yet sealed again; unset or "none" otherwise. */
  SIGNING_KEY_KEK_PREVIOUS: z
    .string()
    .optional()
    // "none" where a secret must hold a value (Secrets Manager) while no rotation is under way.
    .transform((v) => (v && v !== 'none' ? v.split(',').map((k) => k.trim()) : []))
    .pipe(z.array(kek)),
});

/** The KEKs as the key store takes them: the current one, then the ones it replaced. */
export const keksFrom = (c: z.infer<typeof KekConfig>) => ({
  kek: Buffer.from(c.SIGNING_KEY_KEK, 'base64'),
  previousKeks: c.SIGNING_KEY_KEK_PREVIOUS.map((k) => Buffer.from(k, 'base64')),
});

/** The control plane's environment, parsed once at start. A bad value stops the process naming the variable. */
export const ConfigSchema = z.object({
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  /**
   * API processes sharing the port (node:cluster), one per core on a machine with several. Each has its own pools
   * and serves its own /metrics. 1 where the platform runs one process per task.
   */
  API_PROCESSES: z.coerce.number().int().min(1).max(64).default(1),
  /** Where the worker answers /healthz, /readyz (its ticks succeed) and /metrics; unset: no listener. */
  HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  DATABASE_URL_CONTROL_PLANE: z.string().url(),
  DATABASE_POOL_SIZE: int(10),
  ...DatabaseAuthConfig.shape,
  REDIS_URL: z.string().url(),
  ...RedisAuthConfig.shape,
  /**
   * A Redis Cluster's seed nodes (`host:port,...`) for waiting rooms spread over its primaries (WAITING_ROOM_SHARDS);
   * set, the control plane's Redis is that cluster, with REDIS_URL's password. Unset: the one server at REDIS_URL.
   */
  REDIS_CLUSTER_NODES: z
    .string()
    .regex(/^[^\s,:]+:\d{1,5}(,[^\s,:]+:\d{1,5})*$/, 'must be host:port[,host:port...]')
    .optional(),
  /**
   * How long a Redis command may go unanswered before it fails, and the request with it, as 503 store_unavailable: a
   * hung server (a connection open, nothing coming back) otherwise holds every buyer's request until the router gives
   * up on it (UPSTREAM_TIMEOUT_MS, 5 s), an answer with no Retry-After, while the requests pile up on its connections.
   */
  REDIS_COMMAND_TIMEOUT_MS: int(1_000),
  /** Prefix of the control plane's own Redis keys (revocation keys follow the shared contract, unprefixed). */
  REDIS_KEY_PREFIX: z.string().default('cp:'),
  /** Buyers' and promoters' identity provider. */
  IDENTITY_JWKS_URL: z.string().url(),
  IDENTITY_ISSUER: z.string().min(1),
  IDENTITY_AUDIENCE: z.string().min(1),
  /** Shared secret for the cells' internal endpoints (load, signals). */
  CELL_INTERNAL_TOKEN: z.string().min(16),
  ...KekConfig.shape,
  ADMISSION_TOKEN_TTL_SECONDS: int(300),
  /** A released buyer must fetch the token within this window or the slot is given to the next waiter. */
  ADMISSION_CLAIM_WINDOW_SECONDS: int(60),
  KEY_ROTATION_INTERVAL_SECONDS: int(86_400),
  /** A new key is published this long before it signs (longer than any verifier's JWKS cache). */
  KEY_ANNOUNCE_SECONDS: int(600),
  WAITING_ROOM_ABANDON_SECONDS: int(60),
  /** Redis shards each event's waiting room is spread over (waiting-room/shards.ts); 1 keeps one queue per event. */
  WAITING_ROOM_SHARDS: int(1),
  /**
   * How old a room's released-up-to marks may be when a queue-ticket poll is answered from them (waiting-room/marks.ts):
   * each process reads them at most once per interval per event, and a buyer may hear of their turn that much late.
   */
  WAITING_ROOM_MARK_INTERVAL_MS: int(250),
  RATE_LIMIT_IP_PER_SECOND: num(50),
  RATE_LIMIT_IP_BURST: int(100),
  RATE_LIMIT_BUYER_PER_SECOND: num(2),
  RATE_LIMIT_BUYER_BURST: int(10),
  /** Buyer accounts one client IP may register for one presale (a household or an office shares an IP). */
  PRESALE_MAX_ACCOUNTS_PER_IP: int(4),
  /** Buyer accounts one device (the client's own id) may register for one presale. */
  PRESALE_MAX_ACCOUNTS_PER_DEVICE: int(2),
  /** How often the worker draws closed presales, lapses expired invitations and offers their places to the waitlist. */
  PRESALE_TICK_MS: int(1000),
  TRUST_PROXY: bool,
  MAX_BODY_BYTES: int(CONTROL_PLANE_MAX_BODY_BYTES),
  SCHEDULER_TICK_MS: int(1000),
  RELEASE_TICK_MS: int(250),
  CONTROLLER_TICK_MS: int(5000),
  /** How often the worker sends revocations to the cells that do not have them yet: most of revoke-to-refusal. */
  REVOCATION_DELIVERY_TICK_MS: int(100),
  LOAD_RETRY_BASE_MS: int(1000),
  LOAD_RETRY_MAX_MS: int(60_000),
  /** Failed loads in a row before the scheduler stops trying and shows the event as gave_up. */
  LOAD_MAX_ATTEMPTS: int(10),
  CELL_REQUEST_TIMEOUT_MS: int(30_000),
  /** Additive increase per controller tick, as a fraction of the promoter's ceiling (at least 1/s). */
  CONTROLLER_INCREASE_FRACTION: num(0.05),
  CONTROLLER_DECREASE_FACTOR: z.coerce.number().gt(0).lt(1).default(0.5),
  CONTROLLER_INITIAL_FRACTION: num(0.25),
  THRESHOLD_HOLD_P99_MS: num(800),
  THRESHOLD_COMMIT_P99_MS: num(250),
  THRESHOLD_LOCK_WAITS: num(50),
  THRESHOLD_CONNECTION_USE: num(0.85),
  THRESHOLD_OUTBOX_AGE_MS: num(5000),
  THRESHOLD_CONSUMER_LAG: num(10_000),
  THRESHOLD_EXPIRY_DELAY_MS: num(10_000),
  /** The promoter console the API serves under /console (sign-in, session, live view). */
  ...ConsoleConfigSchema.shape,
  /** The buyer's pages the API serves under /shop. */
  ...ShopConfigSchema.shape,
  /** Scheduled scale-out before each onsale and scale-in after (prewarm/). */
  ...PrewarmConfig.shape,
  ...TracingConfig.shape,
});
export type Config = z.infer<typeof ConfigSchema>;

/** The fact relay: the control plane's outbox to its facts topic. */
export const FactRelayConfig = z.object({
  DATABASE_URL_CONTROL_PLANE: z.string().url(),
  ...DatabaseAuthConfig.shape,
  KAFKA_BROKERS: z.string().min(1),
  ...KafkaAuthConfig.shape,
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  FACT_TOPIC_PARTITIONS: z.coerce.number().int().positive().default(3),
  FACT_TOPIC_REPLICATION: z.coerce.number().int().positive().default(1),
  /** Where it answers /healthz (alive), /readyz (a batch succeeded lately) and /metrics; unset: no listener. */
  HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  HEALTH_HOST: z.string().default('127.0.0.1'),
  ...TracingConfig.shape,
});

/** The one-off migration task. */
export const MigrateConfig = z.object({
  DATABASE_URL_CONTROL_PLANE: z.string().url(),
  ...DatabaseAuthConfig.shape,
  ...DatabaseUsersConfig.shape,
  ...TracingConfig.shape,
});

/** The one-off task that seals every admission signing key again under the current KEK (a KEK rotation's second step). */
export const ResealKeysConfig = z.object({
  DATABASE_URL_CONTROL_PLANE: z.string().url(),
  ...DatabaseAuthConfig.shape,
  ...KekConfig.shape,
  ...TracingConfig.shape,
});
export type ResealKeysConfig = z.infer<typeof ResealKeysConfig>;

/** The control plane's configuration from an environment (its processes: `configOrExit`, once at start). */
export const loadConfig = (env: NodeJS.ProcessEnv): Config => parseEnv(ConfigSchema, env);
