import { z } from 'zod';
import { OPERATIONS } from './operations.js';

// JSON shapes accepted by the control API (and, for endpoints, the STRIPE_WEBHOOK_ENDPOINTS env var).

export const webhookEndpointInput = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  secret: z.string().startsWith('whsec_').optional(),
  /** The secret a roll replaced, signed with too until the endpoint is registered without it. */
  previousSecret: z.string().startsWith('whsec_').optional(),
  enabledEvents: z.array(z.string()).min(1).optional(),
});

export const webhookFaultsInput = z.strictObject({
  duplicates: z.int().min(1).max(100).default(1),
  delayMs: z.int().min(0).default(0),
  reorder: z
    .strictObject({
      batchSize: z.int().min(2),
      order: z.enum(['reverse', 'shuffle']).default('reverse'),
      windowMs: z.int().min(1).default(500),
    })
    .nullable()
    .default(null),
  dropFirstAttempt: z.boolean().default(false),
});

export const failureInput = z.strictObject({
  operation: z.enum(OPERATIONS),
  count: z.int().min(1).default(1),
  mode: z.enum(['error', 'lost_response']).default('error'),
});

export const latencyInput = z.strictObject({
  operation: z.enum(OPERATIONS),
  ms: z.int().min(0),
});

/** A provider outage: every API call fails with 500 api_error for this long (0 ends one). */
export const outageInput = z.strictObject({
  seconds: z.int().min(0).max(86_400),
});
