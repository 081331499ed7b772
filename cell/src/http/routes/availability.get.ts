import { createRoute, z } from '@hono/zod-openapi';
import type { CellApp } from '../app';
import { EventParams, errors } from './schemas';

const Availability = z.object({
  eventId: z.string(),
  asOf: z.string(),
  availableCount: z.number().int(),
  availableSeatIds: z.array(z.string()),
  gaAreas: z.array(
    z.object({ areaId: z.string(), name: z.string(), capacity: z.number().int(), remaining: z.number().int() }),
  ),
});

export const availabilityRoute = createRoute({
  method: 'get',
  path: '/events/{eventId}/availability',
  summary: 'Seats that look free (a hint, may be a second stale)',
  request: { params: EventParams },
  responses: {
    200: { description: 'Availability hint', content: { 'application/json': { schema: Availability } } },
    400: errors[400],
    404: errors[404],
  },
});

export function registerAvailability(app: CellApp) {
  app.openapi(availabilityRoute, async (c) => {
    const { eventId } = c.req.valid('param');
    c.header('Cache-Control', 'public, max-age=1');
    return c.json(await c.get('services').availability(eventId), 200);
  });
}
