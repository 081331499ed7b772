import { createRoute, z } from '@hono/zod-openapi';
import type { CellApp } from '../app';
import { EventParams, errors } from './schemas';

const SeatBitmaps = z
  .object({
    eventId: z.string(),
    asOf: z.string(),
    encoding: z.literal('bitmap-by-seat-id'),
    availableCount: z.number().int(),
    sections: z.array(
      z.object({
        section: z.string(),
        seats: z.number().int(),
        free: z.number().int(),
        bitmap: z.string().openapi({
          description:
            'One bit per seat of the section, its seats sorted by id (bytewise), most significant bit first; 1 = looks free. Base64.',
        }),
      }),
    ),
    gaAreas: z.array(
      z.object({ areaId: z.string(), name: z.string(), capacity: z.number().int(), remaining: z.number().int() }),
    ),
  })
  .openapi('SeatBitmaps');

export const seatBitmapsRoute = createRoute({
  method: 'get',
  path: '/events/{eventId}/availability/seats',
  summary:
    'Which seats look free, as a bitmap per section: the document a seat map polls (a hint, may be a second stale)',
  request: {
    params: EventParams,
    headers: z.object({ 'if-none-match': z.string().optional() }),
  },
  responses: {
    200: {
      description: 'The availability document; ETag names its content',
      content: { 'application/json': { schema: SeatBitmaps } },
    },
    304: { description: 'Unchanged since the ETag in If-None-Match' },
    400: errors[400],
    404: errors[404],
  },
});

export function registerSeatBitmaps(app: CellApp) {
  app.openapi(seatBitmapsRoute, async (c) => {
    const { eventId } = c.req.valid('param');
    const doc = await c.get('services').seatBitmaps(eventId);
    // Shared caches (the edge) may keep it as long as the cell does; a poll after that revalidates for 304.
    c.header('Cache-Control', 'public, max-age=1, stale-while-revalidate=2');
    c.header('ETag', doc.etag);
    const known = c.req.valid('header')['if-none-match']?.split(',') ?? [];
    if (known.some((tag) => [doc.etag, '*'].includes(tag.trim()))) return c.body(null, 304);
    return c.body(doc.body, 200, { 'content-type': 'application/json' });
  });
}
