import { connectRedis, redisConnectOptions } from '@onsale/aws-auth';
import { createLogger, type Logger } from '@onsale/contracts';
import { Redis } from 'ioredis';
import { createRemoteJWKSet } from 'jose';
import type pg from 'pg';
import { AdmissionKeyStore } from './admission/key-store';
import { type CellClient, createHttpCellClient } from './cells/client';
import { type Config, keksFrom } from './config';
import { createDb, type Db } from './db/client';
import type { OpenTransaction } from './db/tx';
import { createIdentityVerifier, type IdentityVerifier } from './identity/verifier';
import { type Clock, systemClock } from './lib/clock';
import { clusterReady, createClusterRedis } from './waiting-room/cluster-client';
import { type RoomRedis, withRoomScripts } from './waiting-room/scripts';

/** Everything a verb needs, built once per process and handed down (never imported as globals). */
export interface Services {
  config: Config;
  db: Db;
  /** The caller's transaction, which the verbs given these services join (see withTransaction). */
  transaction?: OpenTransaction;
  pool: pg.Pool;
  redis: RoomRedis;
  /** Prefix of the control plane's Redis keys. */
  prefix: string;
  clock: Clock;
  log: Logger;
  keys: AdmissionKeyStore;
  identity: IdentityVerifier;
  cells: CellClient;
}

export interface ServiceOverrides {
  clock?: Clock;
  log?: Logger;
  identity?: IdentityVerifier;
  cells?: CellClient;
  redis?: Redis;
}

export function createServices(config: Config, o: ServiceOverrides = {}): Services {
  const clock = o.clock ?? systemClock;
  const log = o.log ?? createLogger({ service: 'control-plane' }, config.LOG_LEVEL);
  const { db, pool } = createDb(config.DATABASE_URL_CONTROL_PLANE, config.DATABASE_POOL_SIZE, config);
  const redis = withRoomScripts(o.redis ?? roomRedis(config));
  const keys = new AdmissionKeyStore({
    db,
    ...keksFrom(config),
    clock,
    tokenTtlSeconds: config.ADMISSION_TOKEN_TTL_SECONDS,
    announceSeconds: config.KEY_ANNOUNCE_SECONDS,
    rotationIntervalSeconds: config.KEY_ROTATION_INTERVAL_SECONDS,
  });
  const identity =
    o.identity ??
    createIdentityVerifier({
      jwks: createRemoteJWKSet(new URL(config.IDENTITY_JWKS_URL), {
        cacheMaxAge: 10 * 60_000,
        cooldownDuration: 30_000,
      }),
      issuer: config.IDENTITY_ISSUER,
      audience: config.IDENTITY_AUDIENCE,
      clock,
    });
  const cells =
    o.cells ?? createHttpCellClient({ token: config.CELL_INTERNAL_TOKEN, timeoutMs: config.CELL_REQUEST_TIMEOUT_MS });
  return { config, db, pool, redis, prefix: config.REDIS_KEY_PREFIX, clock, log, keys, identity, cells };
}

function roomRedis(config: Config): Redis {
  if (!config.REDIS_CLUSTER_NODES)
    return new Redis(config.REDIS_URL, {
      ...redisConnectOptions(config),
      maxRetriesPerRequest: 2,
      commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS,
      enableAutoPipelining: true,
    });
  // IAM tokens are set per connection by connectRedis, which knows one server: a cluster signs in with the password.
  if (config.REDIS_AUTH === 'iam') throw new Error('REDIS_CLUSTER_NODES: a Redis Cluster needs REDIS_AUTH=password');
  return createClusterRedis(
    config.REDIS_CLUSTER_NODES,
    decodeURIComponent(new URL(config.REDIS_URL).password) || undefined,
    config.REDIS_COMMAND_TIMEOUT_MS,
  );
}

export async function closeServices(s: Services): Promise<void> {
  await Promise.allSettled([s.pool.end(), s.redis.quit()]);
}

/** Logs Redis in before the process serves (a no-op with a password, which connects by itself). */
export async function connectServices(s: Services): Promise<void> {
  if (s.config.REDIS_CLUSTER_NODES) return clusterReady(s.redis);
  await connectRedis(s.redis, s.config.REDIS_URL, s.config);
}

/**
 * Says at start whether the admission signing key opens. A key the KEK cannot open does not stop the process
 * (the directory and the console need no key); joins answer 503 signing_key_unavailable and the alert fires.
 */
export async function reportSigningKey(s: Services) {
  const verdict = await s.keys.check();
  if (verdict.ok) s.log.info('admission signing key usable', { kid: verdict.kid });
  else s.log.error('admission signing key unusable: buyers cannot be admitted', { reason: verdict.message });
}
