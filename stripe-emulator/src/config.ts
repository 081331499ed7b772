import { z } from 'zod';
import { webhookEndpointInput } from './control-schemas.js';
import type { EmulatorOptions } from './emulator.js';

export const DEFAULT_PORT = 12111;

const integerFromEnv = z.coerce.number().int().min(0);

const environment = z.object({
  STRIPE_EMULATOR_PORT: integerFromEnv.default(DEFAULT_PORT),
  STRIPE_EMULATOR_HOST: z.string().min(1).default('127.0.0.1'),
  /** JSON array of `{ "url": ..., "secret": "whsec_...", "enabledEvents": [...] }`. */
  STRIPE_WEBHOOK_ENDPOINTS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (!value) return [];
      try {
        return JSON.parse(value) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON array' });
        return z.NEVER;
      }
    })
    .pipe(z.array(webhookEndpointInput)),
  STRIPE_EMULATOR_PROCESSING_DELAY_MS: integerFromEnv.optional(),
  STRIPE_EMULATOR_WEBHOOK_RETRY_BASE_MS: integerFromEnv.optional(),
  STRIPE_EMULATOR_WEBHOOK_RETRY_MAX_ATTEMPTS: integerFromEnv.min(1).optional(),
  /** The only publishable key accepted; unset: any `pk_test_` key. */
  STRIPE_EMULATOR_PUBLISHABLE_KEY: z
    .string()
    .regex(/^pk_test_\w+$/, { message: 'must be a test publishable key (pk_test_...)' })
    .optional(),
});

/** Emulator options from the environment, for the CLI. Throws with every invalid variable named. */
export function optionsFromEnv(env: NodeJS.ProcessEnv): EmulatorOptions & { port: number } {
  const result = environment.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid environment: ${problems.join('; ')}`);
  }
  const config = result.data;
  return {
    port: config.STRIPE_EMULATOR_PORT,
    host: config.STRIPE_EMULATOR_HOST,
    webhookEndpoints: config.STRIPE_WEBHOOK_ENDPOINTS,
    ...(config.STRIPE_EMULATOR_PUBLISHABLE_KEY !== undefined && {
      publishableKey: config.STRIPE_EMULATOR_PUBLISHABLE_KEY,
    }),
    ...(config.STRIPE_EMULATOR_PROCESSING_DELAY_MS !== undefined && {
      processingDelayMs: config.STRIPE_EMULATOR_PROCESSING_DELAY_MS,
    }),
    webhookRetry: {
      ...(config.STRIPE_EMULATOR_WEBHOOK_RETRY_BASE_MS !== undefined && {
        baseDelayMs: config.STRIPE_EMULATOR_WEBHOOK_RETRY_BASE_MS,
      }),
      ...(config.STRIPE_EMULATOR_WEBHOOK_RETRY_MAX_ATTEMPTS !== undefined && {
        maxAttempts: config.STRIPE_EMULATOR_WEBHOOK_RETRY_MAX_ATTEMPTS,
      }),
    },
  };
}
