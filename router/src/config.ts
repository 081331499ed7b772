import { CONTROL_PLANE_MAX_BODY_BYTES } from '@onsale/contracts';
import { TracingConfig } from '@onsale/contracts/runtime/tracing-config';
import { z } from 'zod';

/** A positive whole number from the environment: milliseconds, seconds or a count, as its name says. */
const positiveInt = (def: number) => z.coerce.number().int().positive().default(def);

/** The router's environment, parsed once at start; a bad value stops the process naming the variable. */
export const RouterConfig = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /**
   * Where the router answers /healthz, /readyz (a directory is loaded) and /metrics for the collector beside it in
   * its task, over the loopback: never on PORT, which the internet reaches. Unset: no listener, so no metrics, as a
   * worker without one; the router still routes, and its load balancer checks PORT's /readyz.
   */
  HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  HEALTH_HOST: z.string().default('127.0.0.1'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /** Base URL of the control plane: the directory feed is polled from it, and its own paths are forwarded to it. */
  CONTROL_PLANE_URL: z.string().url(),
  DIRECTORY_POLL_MS: positiveInt(1_000),
  /** The control plane's published admission keys; verified locally so a hold never waits on the control plane. */
  ADMISSION_JWKS_URL: z.string().url(),
  /** How long a fetched JWKS is trusted; a key dropped from the JWKS stops working after this. */
  JWKS_CACHE_MS: positiveInt(60_000),
  /** Deadline for an upstream's response headers (queueing and connecting included), and its longest body stall. */
  UPSTREAM_TIMEOUT_MS: positiveInt(5_000),
  UPSTREAM_CONNECT_TIMEOUT_MS: positiveInt(1_000),
  /** Keep-alive connections per cell (and to the control plane). */
  UPSTREAM_CONNECTIONS: positiveInt(128),
  MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(256 * 1024),
  /** The limit on the upload paths (EDGE_UPLOAD_PATHS: seat maps), the control plane's own limit by default. */
  MAX_UPLOAD_BODY_BYTES: z.coerce.number().int().positive().default(CONTROL_PLANE_MAX_BODY_BYTES),
  /** Seconds a client is told to wait when a cell is down, draining or unreachable. */
  RETRY_AFTER_SECONDS: positiveInt(5),
  /**
   * Whether the hop in front of the router (CloudFront, ALB) is trusted: then its X-Forwarded-For chain is kept and
   * extended and its X-Forwarded-Proto kept; otherwise both are rewritten from the socket the router saw.
   */
  TRUST_PROXY: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  /**
   * With TRUST_PROXY, how many proxies in front of the router append to X-Forwarded-For: CloudFront appends the
   * viewer's address, then the load balancer CloudFront's. Only the entries they appended are kept: whatever comes
   * before them the client wrote itself, and the control plane's per-IP limits read the chain's first entry.
   */
  TRUSTED_PROXY_HOPS: z.coerce.number().int().min(1).max(10).default(2),
  ...TracingConfig.shape,
});
export type RouterConfig = z.infer<typeof RouterConfig>;
