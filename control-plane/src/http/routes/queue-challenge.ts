import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { issueChallenge } from '../../waiting-room/door';
import { asQueuedBuyer, bearerSecurity, QUEUED_BUYER_REFUSALS } from '../auth';
import type { App } from '../env';
import { EventIdParam, PowChallengeSchema } from '../schemas';

const route = createRoute({
  method: 'post',
  path: '/events/{eventId}/queue/challenge',
  tags: ['waiting room'],
  summary: "A proof-of-work challenge for joining this event's waiting room, bound to you, usable for one join",
  description:
    'Find a non-negative integer counter such that SHA-256 of the UTF-8 text challenge + ":" + counter (decimal) starts with ' +
    '`difficulty` zero bits (contracts/src/device-proof.ts: solveChallenge), then join with ' +
    '{ pow: { challenge, counter } } before expiresAt. The difficulty is the onsale’s, raised while arrivals are ' +
    'heavy when the operator made it adaptive. `required: false`: this onsale asks for no proof.',
  security: bearerSecurity,
  middleware: [asQueuedBuyer] as const,
  request: { params: EventIdParam },
  responses: {
    200: { description: 'Your challenge', content: { 'application/json': { schema: PowChallengeSchema } } },
    ...errorResponses('validation_failed', ...QUEUED_BUYER_REFUSALS),
  },
});

export function registerQueueChallenge(app: App) {
  app.openapi(route, async (c) => {
    c.header('cache-control', 'no-store');
    return c.json(
      await issueChallenge({ ctx: c.get('services'), actor: c.get('actor'), eventId: c.req.valid('param').eventId }),
      200,
    );
  });
}
