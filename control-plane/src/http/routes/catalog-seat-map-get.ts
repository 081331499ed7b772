import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { catalogSeatMapTag, readCatalogSeatMap } from '../../catalog/catalog';
import { SEAT_LAYOUT, SECTION_GAP } from '../../catalog/layout';
import { isNotModified } from '../conditional';
import type { App } from '../env';
import { EventIdParam } from '../schemas';

/**
 * Longer than the page's: a seat map changes only on an upload, which is possible only before the sale is
 * loaded into its cell; a re-upload reaches buyers within five minutes (the page's seatMapVersion tells sooner).
 */
export const CATALOG_SEAT_MAP_CACHE = 'public, max-age=300, stale-while-revalidate=600';

const Place = z.object({ id: z.string(), name: z.string(), capacity: z.number().int(), tier: z.string() });

const CatalogSeatMap = z
  .object({
    eventId: z.string().uuid(),
    seatMapVersion: z.number().int(),
    layout: z.literal(SEAT_LAYOUT).openapi({ description: 'How seat positions were computed (see the route)' }),
    seatCount: z.number().int(),
    sections: z.array(
      z.object({
        section: z.string(),
        x: z.number().int().openapi({ description: "The block's left edge, in seat places" }),
        width: z.number().int(),
        height: z.number().int(),
        rows: z.array(
          z.object({
            row: z.string(),
            seats: z.array(
              z.object({
                id: z.string().uuid().openapi({ description: 'The id holds and the availability bitmap use' }),
                label: z.string(),
                tier: z.string().openapi({ description: "The price tier's code (the page's tiers)" }),
                x: z.number().int(),
                y: z.number().int(),
              }),
            ),
          }),
        ),
      }),
    ),
    gaAreas: z.array(Place).openapi({ description: 'General-admission areas: sold by quantity, no seats' }),
  })
  .openapi('CatalogSeatMap');

const route = createRoute({
  method: 'get',
  path: '/events/{eventId}/catalog/seat-map',
  tags: ['catalog'],
  summary: "An event's seat map to draw: sections, rows, seats (id, label, tier, position) and GA areas",
  description:
    'No sign-in; announced events only (a draft is 404). ' +
    `Positions (layout '${SEAT_LAYOUT}', units of one seat): sections are blocks left to right in natural order ` +
    `of their names ("2" before "10"), ${SECTION_GAP} empty columns apart; rows top to bottom (y = 0 first) in natural ` +
    'order; seats left to right in natural order of their labels. ' +
    "To read the cell's availability document (GET /events/{eventId}/availability/seats, encoding " +
    "'bitmap-by-seat-id'): take a section's seats from here, sort them by id bytewise (lowercase uuids as " +
    "plain strings), and bit i of that section's bitmap (most significant bit first) is seat i. " +
    `Cache-Control: ${CATALOG_SEAT_MAP_CACHE}; the weak ETag changes with every upload (If-None-Match: 304).`,
  request: { params: EventIdParam, headers: z.object({ 'if-none-match': z.string().optional() }) },
  responses: {
    200: { description: 'The seat map', content: { 'application/json': { schema: CatalogSeatMap } } },
    304: { description: 'Unchanged since the ETag in If-None-Match' },
    ...errorResponses('validation_failed', 'not_found'),
  },
});

export function registerCatalogSeatMap(app: App) {
  app.openapi(route, async (c) => {
    const ctx = c.get('services');
    const { eventId } = c.req.valid('param');
    // Revalidation reads the event row only: the tag is the seat map's version.
    const current = await catalogSeatMapTag({ ctx, eventId });
    c.header('cache-control', CATALOG_SEAT_MAP_CACHE);
    if (isNotModified(c, current)) {
      c.header('etag', current);
      return c.body(null, 304);
    }
    const { doc, etag } = await readCatalogSeatMap({ ctx, eventId });
    c.header('etag', etag);
    return c.json(doc, 200);
  });
}
