import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, IdempotencyKey, Instant } from '@onsale/contracts';
import { createEvent } from '../../events/events';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventSchema, toEventDto } from '../schemas';

export const CreateEventBody = z
  .object({
    name: z.string().min(1).max(200),
    venue: z.string().min(1).max(200),
    timeZone: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .openapi({ description: "The venue's IANA time zone", example: 'Europe/Paris' }),
    startsAt: Instant,
    cellId: z
      .string()
      .min(1)
      .optional()
      .openapi({ description: 'Pin to a cell; otherwise the least-loaded active cell' }),
  })
  .openapi('CreateEvent');

const route = createRoute({
  method: 'post',
  path: '/events',
  tags: ['events'],
  summary: 'Create an event (manager or owner)',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: {
    headers: z.object({
      'idempotency-key': IdempotencyKey.optional().openapi({
        description: 'The same key again (after a lost answer) answers the event it created instead of a second one',
      }),
    }),
    body: { required: true, content: { 'application/json': { schema: CreateEventBody } } },
  },
  responses: {
    201: {
      description: 'Created (or, with a key used before, the event it created)',
      content: { 'application/json': { schema: EventSchema } },
    },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'conflict', 'idempotency_key_reused'),
  },
});

export function registerCreateEvent(app: App) {
  app.openapi(route, async (c) => {
    const actor = c.get('actor');
    const b = c.req.valid('json');
    const idempotencyKey = c.req.valid('header')['idempotency-key'];
    const ev = await createEvent({
      ctx: c.get('services'),
      actor,
      input: { ...b, startsAt: new Date(b.startsAt), idempotencyKey },
    });
    return c.json(toEventDto(ev), 201);
  });
}
