import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, Instant } from '@onsale/contracts';
import { updateEvent } from '../../events/events';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam, EventSchema, toEventDto } from '../schemas';

const Body = z
  .object({
    name: z.string().min(1).max(200).optional(),
    venue: z.string().min(1).max(200).optional(),
    timeZone: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .openapi({ description: "The venue's IANA time zone", example: 'Europe/Paris' }),
    startsAt: Instant.optional(),
  })
  .strict()
  .openapi('UpdateEvent');

const route = createRoute({
  method: 'patch',
  path: '/events/{eventId}',
  tags: ['events'],
  summary: 'Edit an event before its onsale starts (manager or owner)',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: { params: EventIdParam, body: { required: true, content: { 'application/json': { schema: Body } } } },
  responses: {
    200: { description: 'Updated', content: { 'application/json': { schema: EventSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict'),
  },
});

export function registerUpdateEvent(app: App) {
  app.openapi(route, async (c) => {
    const actor = c.get('actor');
    const b = c.req.valid('json');
    const ev = await updateEvent({
      ctx: c.get('services'),
      actor,
      eventId: c.req.valid('param').eventId,
      input: {
        name: b.name,
        venue: b.venue,
        timeZone: b.timeZone,
        startsAt: b.startsAt ? new Date(b.startsAt) : undefined,
      },
    });
    return c.json(toEventDto(ev), 200);
  });
}
