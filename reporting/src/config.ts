import { DatabaseAuthConfig, KafkaAuthConfig } from '@onsale/aws-auth';
import { TracingConfig } from '@onsale/contracts/runtime/tracing-config';
import { z } from 'zod';

/** The reporting consumer's environment, parsed once at start; a bad value names the variable. */
export const ReportingConfig = z.object({
  /**
   * The control plane's own brokers (its facts topic), signed in to as KAFKA_AUTH says. Each cell's topic is
   * read through the brokers and sign-in of the cell's registry entry, never through these.
   */
  KAFKA_BROKERS: z.string().min(1),
  ...KafkaAuthConfig.shape,
  /** The control plane's database: the cell registry is read from it, projections live in its `reporting` schema. */
  DATABASE_URL_CONTROL_PLANE: z.string().url(),
  ...DatabaseAuthConfig.shape,
  S3_BUCKET: z.string().min(3),
  S3_REGION: z.string().default('us-east-1'),
  /** Set for a local S3-compatible server; absent means Amazon S3 with the task role. */
  S3_ENDPOINT: z.string().url().optional(),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  REPORTING_PREFIX: z.string().default(''),
  REPORTING_GROUP_PREFIX: z.string().default('reporting'),
  FLUSH_MAX_MESSAGES: z.coerce.number().int().positive().default(5_000),
  FLUSH_MAX_AGE_MS: z.coerce.number().int().positive().default(2_000),
  REGISTRY_POLL_MS: z.coerce.number().int().positive().default(5_000),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /** Where it answers /healthz (alive), /readyz (its registry poll succeeded lately) and /metrics; unset: no listener. */
  HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  HEALTH_HOST: z.string().default('127.0.0.1'),
  /**
   * Crash tests only: `<source>@<n>` kills this process with SIGKILL when that source's nth batch
   * is durable in S3 and in the projections and its offsets are not committed yet.
   */
  FAILPOINT_KILL_BEFORE_COMMIT: z
    .string()
    .regex(/^[\w.-]+@[1-9]\d*$/, 'expected <source>@<n>')
    .transform((v) => {
      const at = v.lastIndexOf('@');
      return { source: v.slice(0, at), nth: Number(v.slice(at + 1)) };
    })
    .optional(),
  ...TracingConfig.shape,
});
export type ReportingConfig = z.infer<typeof ReportingConfig>;
