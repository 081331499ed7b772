import { Sha256 } from '@aws-crypto/sha256-js';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Signer } from '@aws-sdk/rds-signer';
import { SignatureV4 } from '@smithy/signature-v4';
import { generateAuthToken } from 'aws-msk-iam-sasl-signer-js';
import pg from 'pg';
import { z } from 'zod';

/**
 * How a process proves who it is to PostgreSQL, Kafka and Redis. Locally and in CI: the password in the
 * URL and plaintext. On AWS: IAM everywhere (RDS Proxy, MSK on 9098, ElastiCache users), so no task holds
 * a long-lived database, broker or cache credential. Each process's config schema spreads these fields.
 */
export const DatabaseAuthConfig = z.object({
  DATABASE_AUTH: z.enum(['password', 'iam']).default('password'),
  /** A password kept out of the URL (an ECS secret); the one-off migration task logs in as the master user with it. */
  DATABASE_PASSWORD: z.string().min(1).optional(),
  /** Signing region for IAM tokens; required by `iam` modes. */
  AWS_REGION: z.string().min(1).optional(),
});
export type DatabaseAuthConfig = z.infer<typeof DatabaseAuthConfig>;

export const KafkaAuthConfig = z.object({
  KAFKA_AUTH: z.enum(['plaintext', 'aws-msk-iam']).default('plaintext'),
  AWS_REGION: z.string().min(1).optional(),
});
export type KafkaAuthConfig = z.infer<typeof KafkaAuthConfig>;

export const RedisAuthConfig = z.object({
  REDIS_AUTH: z.enum(['password', 'iam']).default('password'),
  /** The ElastiCache replication group id, which an IAM token names (the URL's host is an endpoint, not the id). */
  REDIS_CACHE_NAME: z.string().min(1).optional(),
  AWS_REGION: z.string().min(1).optional(),
});
export type RedisAuthConfig = z.infer<typeof RedisAuthConfig>;

function regionFor(mode: string, region: string | undefined): string {
  if (!region) throw new Error(`AWS_REGION is required with ${mode}`);
  return region;
}

/** The part of a pg pool's options that says where and as whom; spread it into `new pg.Pool({...})`. */
export interface PgConnection {
  connectionString?: string;
  host?: string;
  port?: number;
  database?: string;
  user?: string;
  password?: string | (() => Promise<string>);
  ssl?: { rejectUnauthorized: boolean };
}

/**
 * With `iam`, pg asks for a password on every new connection and gets a fresh 15-minute token, so a
 * pool that outlives a token still opens connections. pg lets a URL's fields win over explicit ones, so
 * any mode that supplies the password separately takes the URL apart instead of passing it through.
 */
export function pgConnection(url: string, auth: DatabaseAuthConfig): PgConnection {
  if (auth.DATABASE_AUTH === 'password' && !auth.DATABASE_PASSWORD) return { connectionString: url };
  const u = new URL(url);
  const target = {
    host: decodeURIComponent(u.hostname),
    port: Number(u.port || 5432),
    database: decodeURIComponent(u.pathname.slice(1)),
    user: decodeURIComponent(u.username),
    // The deployed URLs ask for verify-full (RDS Proxy's ACM certificate; the image trusts the RDS CAs for the writer).
    ...(u.searchParams.get('sslmode') === 'verify-full' && { ssl: { rejectUnauthorized: true } }),
  };
  if (auth.DATABASE_AUTH === 'password') return { ...target, password: auth.DATABASE_PASSWORD };
  const signer = new Signer({
    hostname: target.host,
    port: target.port,
    username: target.user,
    region: regionFor('DATABASE_AUTH=iam', auth.AWS_REGION),
  });
  return { ...target, password: () => signer.getAuthToken() };
}

interface ErrorEmitter {
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/**
 * A pool whose server may go away (restarted, failed over, killed in a drill) without taking the process with it.
 * pg emits a lost connection as an 'error' event on the pool (an idle client) or on the client (one checked out
 * between two statements of a transaction), and an 'error' event nobody listens to ends a Node process. The
 * statement in flight still fails with the error; the pool's next checkout opens a new connection.
 */
function tolerateConnectionLoss<
  P extends ErrorEmitter & { on(event: 'connect', l: (c: ErrorEmitter) => void): unknown },
>(pool: P): P {
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * The one way the platform opens a PostgreSQL pool: connected as `auth` says (a password, or an IAM token per
 * connection) and tolerant of the server going away. `options` are pg-pool's own (size, client class, timeouts).
 */
export function createPool(
  url: string,
  auth: DatabaseAuthConfig,
  options: Omit<pg.PoolConfig, 'connectionString'> = {},
) {
  return tolerateConnectionLoss(new pg.Pool({ ...pgConnection(url, auth), ...options }));
}

/** kafkajs client options for the chosen mode: MSK IAM is SASL/OAUTHBEARER with a SigV4 token, over TLS. */
export function kafkaSecurity(auth: KafkaAuthConfig) {
  if (auth.KAFKA_AUTH === 'plaintext') return {};
  const region = regionFor('KAFKA_AUTH=aws-msk-iam', auth.AWS_REGION);
  return {
    ssl: true,
    sasl: {
      mechanism: 'oauthbearer' as const,
      oauthBearerProvider: async () => ({ value: (await generateAuthToken({ region })).token }),
    },
  };
}

/** ElastiCache accepts a connection for 12 hours; a token is good for 15 minutes, so refresh well inside it. */
export const REDIS_TOKEN_REFRESH_MS = 10 * 60_000;

/**
 * An ElastiCache IAM token: a SigV4-presigned `connect` request for the user, without its scheme. The
 * URL's user is the ElastiCache user id, which IAM authentication requires to equal its user name.
 */
export async function redisIamToken(url: string, auth: RedisAuthConfig): Promise<string> {
  const region = regionFor('REDIS_AUTH=iam', auth.AWS_REGION);
  if (!auth.REDIS_CACHE_NAME) throw new Error('REDIS_CACHE_NAME is required with REDIS_AUTH=iam');
  const user = decodeURIComponent(new URL(url).username);
  const signer = new SignatureV4({ service: 'elasticache', region, credentials: defaultProvider(), sha256: Sha256 });
  const signed = await signer.presign(
    {
      method: 'GET',
      protocol: 'http:',
      hostname: auth.REDIS_CACHE_NAME,
      path: '/',
      query: { Action: 'connect', User: user },
      headers: { host: auth.REDIS_CACHE_NAME },
    },
    { expiresIn: 900 },
  );
  const query = new URLSearchParams(signed.query as Record<string, string>).toString();
  return `${auth.REDIS_CACHE_NAME}/?${query}`;
}

/** Whatever holds a Redis connection and reads its password when it (re)connects, as ioredis does. */
export interface RedisLike {
  options: { password?: string };
  status: string;
  connect(): Promise<void>;
  once(event: 'ready', listener: () => void): unknown;
  off(event: 'ready', listener: () => void): unknown;
}

/** How long a start waits for a password client's connection before it goes on without it. */
const REDIS_READY_WAIT_MS = 5_000;

/** ioredis options for the mode: with IAM the client must not connect before it has a token. */
export const redisConnectOptions = (auth: RedisAuthConfig) => ({ lazyConnect: auth.REDIS_AUTH === 'iam' });

/**
 * With IAM, logs a client created with redisConnectOptions in with a token, and puts a fresh one in its
 * options every REDIS_TOKEN_REFRESH_MS for its next reconnect; returns the refresher's stop. A password
 * client connects by itself: this waits until it is ready, so a process that serves after it does not
 * answer its first requests with "unavailable" (a client without an offline queue refuses commands until
 * then). A Redis down at the start does not stop the process: after REDIS_READY_WAIT_MS it goes on, and
 * the client keeps reconnecting.
 */
export async function connectRedis(client: RedisLike, url: string, auth: RedisAuthConfig): Promise<() => void> {
  if (auth.REDIS_AUTH === 'password') {
    if (client.status !== 'ready')
      await new Promise<void>((resolve) => {
        const ready = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          client.off('ready', ready);
          resolve();
        }, REDIS_READY_WAIT_MS);
        client.once('ready', ready);
      });
    return () => {};
  }
  client.options.password = await redisIamToken(url, auth);
  const timer = setInterval(() => {
    redisIamToken(url, auth)
      .then((token) => {
        client.options.password = token;
      })
      .catch(() => {});
  }, REDIS_TOKEN_REFRESH_MS);
  timer.unref();
  await client.connect();
  return () => clearInterval(timer);
}

/** Comma-separated database users the migration task creates, one per process role (`onsale_<role>`). */
export const DatabaseUsersConfig = z.object({
  DATABASE_ROLE_USERS: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*(,[a-z_][a-z0-9_]*)*$/, 'comma-separated lowercase user names')
    .optional(),
});

/**
 * Creates each role's login user if missing and grants it the application's table privileges; where
 * `rds_iam` exists (Aurora) also that, which makes the user log in with IAM tokens only. Idempotent, and
 * two migrations racing on one server (local cells share it) both succeed.
 */
export async function ensureDatabaseUsers(query: (sql: string) => Promise<unknown>, users: readonly string[]) {
  for (const user of users) {
    await query(
      `DO $$ BEGIN CREATE ROLE ${user} LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`,
    );
    await query(
      `DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'rds_iam') THEN GRANT rds_iam TO ${user}; END IF; END $$`,
    );
    await query(`GRANT USAGE ON SCHEMA public TO ${user}`);
    await query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${user}`);
    await query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${user}`);
  }
}
