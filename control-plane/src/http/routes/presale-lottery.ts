import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { LOTTERY_SCHEME, lotteryRecord } from '../../presale/lottery';
import type { App } from '../env';
import { EventIdParam } from '../schemas';

const LotteryRecordSchema = z
  .object({
    scheme: z.literal(LOTTERY_SCHEME),
    eventId: z.string(),
    commitment: z.string().openapi({ description: "SHA-256 (hex) of the lottery's seed, published from opening" }),
    registrationClosesAt: z.string(),
    invitations: z.number().int(),
    waitlistSize: z.number().int(),
    drawn: z.boolean(),
    seed: z.string().nullable().openapi({ description: 'hex of the 32-byte seed; null until the draw' }),
    log: z
      .string()
      .nullable()
      .openapi({
        description:
          'Compact JWS (the admission signing key, in /.well-known/jwks.json) whose payload is the draw: ' +
          '{scheme, eventId, commitment, seed, invitations, waitlistSize, drawnAt, entries: [{pseudonym, rank, outcome}]}; ' +
          'rank orders the pseudonyms by the first 52 bits of HMAC-SHA256(seed, pseudonym), then by pseudonym',
      }),
  })
  .openapi('LotteryRecord');

const route = createRoute({
  method: 'get',
  path: '/events/{eventId}/presale/lottery',
  tags: ['presale'],
  summary: "The presale lottery's seed commitment; after the draw, the seed and the signed draw",
  description: 'Your pseudonym is in GET presale/me.',
  request: { params: EventIdParam },
  responses: {
    200: { description: 'The lottery record', content: { 'application/json': { schema: LotteryRecordSchema } } },
    ...errorResponses('validation_failed', 'not_found', 'conflict', 'signing_key_unavailable'),
  },
});

export function registerPresaleLottery(app: App) {
  app.openapi(route, async (c) => {
    const record = await lotteryRecord(c.get('services'), c.req.valid('param').eventId);
    c.header('cache-control', record.drawn ? 'public, max-age=60' : 'public, max-age=30');
    return c.json(record, 200);
  });
}
