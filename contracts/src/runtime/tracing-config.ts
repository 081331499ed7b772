import { z } from 'zod';

/**
 * The OpenTelemetry variables every process reads (spread into each process's schema, so a task definition may set
 * them): the SDK reads them from the environment itself, this only names them and refuses a malformed one at start.
 */
export const TracingConfig = z.object({
  /** An OTLP/HTTP collector (`http://127.0.0.1:4318` beside a task, the launcher's locally); unset: no traces. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  /** service.name of the spans; the process's role name when unset. */
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  /** Head sampling: the root decides (the router's request, a polling loop's batch), the rest follow its traceparent. */
  OTEL_TRACES_SAMPLER: z
    .enum([
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ])
    .optional(),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
});
export type TracingConfig = z.infer<typeof TracingConfig>;
