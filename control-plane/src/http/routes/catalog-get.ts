import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { PUBLIC_STATUSES, readCatalogPage } from '../../catalog/catalog';
import { isNotModified } from '../conditional';
import type { App } from '../env';
import { EventIdParam } from '../schemas';

/** Short: the sale status (on sale, paused, sold out) must reach buyers within seconds of changing. */
export const CATALOG_PAGE_CACHE = 'public, max-age=10, stale-while-revalidate=20';

const Tier = z.object({
  code: z.string(),
  name: z.string(),
  currency: z.string().openapi({ example: 'eur' }),
  price: z.number().int().openapi({ description: "The tier's price, minor units" }),
  fee: z.number().int().openapi({ description: 'Service fee per ticket, minor units' }),
  fees: z
    .enum(['included', 'added'])
    .openapi({ description: "'included': the fee is inside the price; 'added': it is paid on top" }),
  buyerPays: z.number().int().openapi({ description: 'What a buyer pays per ticket of this tier, minor units' }),
});

const CatalogPage = z
  .object({
    eventId: z.string().uuid(),
    name: z.string(),
    venue: z.string(),
    timeZone: z.string().openapi({ description: "The venue's IANA time zone", example: 'Europe/Paris' }),
    startsAt: z.string().openapi({ description: 'When the event starts (ISO 8601, UTC)' }),
    saleStatus: z.enum(PUBLIC_STATUSES),
    roomOpensAt: z.string().nullable().openapi({ description: 'When the waiting room opens; null until scheduled' }),
    onsaleAt: z.string().nullable().openapi({ description: 'When the sale starts; null until scheduled' }),
    seatCount: z.number().int(),
    seatMapVersion: z
      .number()
      .int()
      .openapi({ description: 'The seat map this page goes with (GET .../catalog/seat-map names the same version)' }),
    tiers: z.array(Tier),
    sections: z.array(
      z.object({ section: z.string(), seats: z.number().int(), tiers: z.array(z.string()) }).openapi({
        description: "A section of the seat map: its number of seats and the tiers they're sold in",
      }),
    ),
    gaAreas: z.array(z.object({ id: z.string(), name: z.string(), capacity: z.number().int(), tier: z.string() })),
  })
  .openapi('CatalogPage');

const route = createRoute({
  method: 'get',
  path: '/events/{eventId}/catalog',
  tags: ['catalog'],
  summary: "An event's public page: venue, date, tiers with the fees buyers pay, sections, onsale time, sale status",
  description:
    'No sign-in. Only announced events (scheduled, on sale, paused, sold out); a draft is 404 like an unknown id. ' +
    `Cache-Control: ${CATALOG_PAGE_CACHE}; the weak ETag names the content, If-None-Match answers 304.`,
  request: { params: EventIdParam, headers: z.object({ 'if-none-match': z.string().optional() }) },
  responses: {
    200: { description: "The event's page", content: { 'application/json': { schema: CatalogPage } } },
    304: { description: 'Unchanged since the ETag in If-None-Match' },
    ...errorResponses('validation_failed', 'not_found'),
  },
});

export function registerCatalogPage(app: App) {
  app.openapi(route, async (c) => {
    const { doc, etag } = await readCatalogPage({ ctx: c.get('services'), eventId: c.req.valid('param').eventId });
    c.header('etag', etag);
    c.header('cache-control', CATALOG_PAGE_CACHE);
    if (isNotModified(c, etag)) return c.body(null, 304);
    return c.json(doc, 200);
  });
}
