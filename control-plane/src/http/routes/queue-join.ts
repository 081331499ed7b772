import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { joinQueue } from '../../waiting-room/join';
import { asQueuedBuyer, bearerSecurity, QUEUED_BUYER_REFUSALS } from '../auth';
import type { App } from '../env';
import { EventIdParam, JoinQueueSchema, QueueStatusSchema } from '../schemas';

const route = createRoute({
  method: 'post',
  path: '/events/{eventId}/queue',
  tags: ['waiting room'],
  summary: 'Join the waiting room (idempotent per buyer: a refresh or a second device keeps the place)',
  security: bearerSecurity,
  middleware: [asQueuedBuyer] as const,
  description:
    'What the onsale may ask at the door (set by an operator): `pow`, a challenge from POST queue/challenge with the ' +
    'counter that solves it (a 403 proof_of_work_invalid names the field that falls short); `jkt`, the RFC 7638 ' +
    'thumbprint of the ES256 key that will sign the DPoP proof of every hold (the admission token is then bound to ' +
    'it, cnf.jkt). Both may be sent where not asked: the proof is then ignored, and the key still binds the token.',
  request: {
    params: EventIdParam,
    headers: z.object({
      'x-presale-code': z
        .string()
        .min(1)
        .max(64)
        .optional()
        .openapi({ description: "Your presale access code (GET presale/me): required until the event's presale ends" }),
    }),
    body: { required: false, content: { 'application/json': { schema: JoinQueueSchema } } },
  },
  responses: {
    200: { description: 'Your place', content: { 'application/json': { schema: QueueStatusSchema } } },
    ...errorResponses(
      'validation_failed',
      ...QUEUED_BUYER_REFUSALS,
      'proof_of_work_invalid',
      'not_found',
      'conflict',
      'waiting_room_unavailable',
      'signing_key_unavailable',
    ),
  },
});

export function registerJoinQueue(app: App) {
  app.openapi(route, async (c) => {
    const actor = c.get('actor');
    c.header('cache-control', 'no-store');
    return c.json(
      await joinQueue({
        ctx: c.get('services'),
        actor,
        eventId: c.req.valid('param').eventId,
        charges: c.get('charges'),
        door: c.req.valid('json'),
        accessCode: c.req.valid('header')['x-presale-code'],
      }),
      200,
    );
  });
}
