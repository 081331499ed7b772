import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { FAIRNESS_SCHEME, fairnessRecord } from '../../waiting-room/fairness';
import type { App } from '../env';
import { EventIdParam } from '../schemas';

const FairnessRecordSchema = z
  .object({
    scheme: z.literal(FAIRNESS_SCHEME),
    eventId: z.string(),
    commitment: z.string().openapi({ description: 'SHA-256 (hex) of the shuffle seed, published from scheduling on' }),
    roomOpensAt: z.string(),
    revealed: z.boolean(),
    seed: z.string().nullable().openapi({ description: 'hex of the 32-byte seed; null until the room opens' }),
    log: z
      .string()
      .nullable()
      .openapi({
        description:
          'Compact JWS (the admission signing key, in /.well-known/jwks.json) whose payload is the admission log: ' +
          '{scheme, eventId, commitment, seed, issuedAt, entries: [{pseudonym, position, admittedAt, skippedAt}]}',
      }),
  })
  .openapi('FairnessRecord');

const route = createRoute({
  method: 'get',
  path: '/events/{eventId}/queue/fairness',
  tags: ['waiting room'],
  summary: "The queue shuffle's seed commitment; once the room opens, the seed and the signed admission log",
  description:
    'Early arrivals are ordered by HMAC-SHA256(seed, pseudonym). Check a record with `pnpm fairness:verify <url>`; ' +
    'your pseudonym is in GET queue/me.',
  request: { params: EventIdParam },
  responses: {
    200: { description: 'The fairness record', content: { 'application/json': { schema: FairnessRecordSchema } } },
    ...errorResponses('validation_failed', 'not_found', 'signing_key_unavailable'),
  },
});

export function registerQueueFairness(app: App) {
  app.openapi(route, async (c) => {
    const record = await fairnessRecord(c.get('services'), c.req.valid('param').eventId);
    // The log grows as buyers are admitted; a few seconds of caching bounds the signing a crowd of readers costs.
    c.header('cache-control', record.revealed ? 'public, max-age=5' : 'public, max-age=30');
    return c.json(record, 200);
  });
}
