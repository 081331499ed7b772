import { createRoute, z } from '@hono/zod-openapi';
import { DomainError, errorResponses, MAX_SEAT_PRICE, SEATS_PER_LOAD_MAX } from '@onsale/contracts';
import { uploadSeatMap } from '../../events/seat-map';
import { GA_CAPACITY_MAX } from '../../events/seat-map-parse';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam } from '../schemas';

const Result = z
  .object({
    eventId: z.string(),
    seats: z.number().int(),
    created: z.number().int(),
    seatMapVersion: z.number().int(),
    tiers: z.array(
      z.object({
        code: z.string(),
        name: z.string(),
        price: z.number().int(),
        currency: z.string(),
        fee: z.number().int(),
        fees: z.enum(['included', 'added']),
      }),
    ),
    gaAreas: z.array(z.object({ id: z.string(), name: z.string(), capacity: z.number().int(), tier: z.string() })),
  })
  .openapi('SeatMapStored');

const text = (maxLength: number) => ({ type: 'string' as const, minLength: 1, maxLength });
const SeatMapUpload = {
  type: 'object' as const,
  anyOf: [{ required: ['seats'] }, { required: ['gaAreas'] }],
  properties: {
    tiers: {
      type: 'array' as const,
      items: {
        type: 'object' as const,
        required: ['code', 'price', 'currency'],
        properties: {
          code: text(32),
          name: text(200),
          price: { type: 'integer' as const, minimum: 1, maximum: MAX_SEAT_PRICE },
          currency: { type: 'string' as const, pattern: '^[A-Za-z]{3}$' },
          fee: { type: 'integer' as const, minimum: 0, maximum: MAX_SEAT_PRICE },
          fees: { type: 'string' as const, enum: ['included', 'added'] },
        },
      },
    },
    gaAreas: {
      type: 'array' as const,
      items: {
        type: 'object' as const,
        required: ['name', 'capacity', 'tier'],
        properties: {
          name: text(64),
          capacity: { type: 'integer' as const, minimum: 1, maximum: GA_CAPACITY_MAX },
          tier: text(32),
        },
      },
    },
    seats: {
      type: 'array' as const,
      minItems: 1,
      maxItems: SEATS_PER_LOAD_MAX,
      items: {
        type: 'object' as const,
        required: ['section', 'row', 'tier'],
        properties: { section: text(64), row: text(16), seat: text(32), label: text(64), tier: text(32) },
      },
    },
  },
};

const route = createRoute({
  method: 'put',
  path: '/events/{eventId}/seat-map',
  tags: ['events'],
  summary: 'Upload the seat map (JSON or CSV, up to 100,000 seats, all or nothing)',
  description:
    "JSON: `{ tiers: [{code, name, price (minor units), currency, fee?, fees?: 'included' | 'added'}], seats: [{section, row, seat | label, tier}], gaAreas?: [{name, capacity, tier}] }` " +
    '(general-admission areas: a capacity and a tier, no seats). ' +
    `A tier's currency is an ISO 4217 code; its price plus an added fee is at most ${MAX_SEAT_PRICE} minor units, so an ` +
    "order of the most places a buyer may take stays within the payment provider's largest charge. " +
    'CSV (text/csv): header with section,row,seat|label,tier and optionally price,currency and capacity ' +
    '(a row with a capacity is a GA area named by its section, its row and seat empty). ' +
    'A 400 lists each problem with its row (1-based data row; CSV also gives the file line) and field; nothing is stored.',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: {
    params: EventIdParam,
    // Plain schemas, not zod: the upload's own parser reports every problem with its row and field.
    body: {
      required: true,
      content: {
        'application/json': { schema: SeatMapUpload },
        'text/csv': { schema: { type: 'string', example: 'section,row,seat,tier,price,currency\nA,1,1,std,7500,eur' } },
      },
    },
  },
  responses: {
    200: {
      description: 'Stored; seat ids are stable for unchanged labels',
      content: { 'application/json': { schema: Result } },
    },
    ...errorResponses('validation_failed', 'bad_request', 'unauthenticated', 'forbidden', 'not_found', 'conflict'),
  },
});

export function registerPutSeatMap(app: App) {
  app.openapi(route, async (c) => {
    const actor = c.get('actor');
    const type = (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    const format = type === 'application/json' ? 'json' : type === 'text/csv' ? 'csv' : null;
    if (!format)
      throw new DomainError('unsupported_media_type', 'content-type must be application/json or text/csv', {
        header: 'content-type',
        given: type ?? null,
      });
    const r = await uploadSeatMap({
      ctx: c.get('services'),
      actor,
      eventId: c.req.valid('param').eventId,
      input: { format, body: await c.req.text() },
    });
    return c.json(r, 200);
  });
}
