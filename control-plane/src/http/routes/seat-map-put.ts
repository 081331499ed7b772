import { createRoute, z } from '@hono/zod-openapi';
import { uploadSeatMap } from '../../events/seat-map';
import { ServiceError } from '../../lib/errors';
import { promoter } from '../auth';
import type { App } from '../env';
import { errorResponses } from '../errors';
import { EventIdParam } from '../schemas';

const Result = z
  .object({
    eventId: z.string(),
    seats: z.number().int(),
    created: z.number().int(),
    seatMapVersion: z.number().int(),
    tiers: z.array(z.object({ code: z.string(), name: z.string(), price: z.number().int(), currency: z.string() })),
  })
  .openapi('SeatMapStored');

const route = createRoute({
  method: 'put',
  path: '/events/{eventId}/seat-map',
  tags: ['events'],
  summary: 'Upload the seat map (JSON or CSV, up to 100,000 seats, all or nothing)',
  description:
    'JSON: `{ tiers: [{code, name, price (minor units), currency}], seats: [{section, row, seat | label, tier}] }`. ' +
    'CSV (text/csv): header with section,row,seat|label,tier and optionally price,currency. ' +
    'A 400 lists each problem with its row (1-based data row; CSV also gives the file line) and field; nothing is stored.',
  security: [{ bearer: [] }],
  request: { params: EventIdParam },
  responses: {
    200: {
      description: 'Stored; seat ids are stable for unchanged labels',
      content: { 'application/json': { schema: Result } },
    },
    ...errorResponses(
      'validation_failed',
      'bad_request',
      'unauthenticated',
      'forbidden',
      'not_found',
      'conflict',
      'payload_too_large',
    ),
  },
});

export function registerPutSeatMap(app: App) {
  app.openapi(route, async (c) => {
    const actor = await promoter(c);
    const type = (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    const format = type === 'application/json' ? 'json' : type === 'text/csv' ? 'csv' : null;
    if (!format) throw new ServiceError('bad_request', 'content-type must be application/json or text/csv');
    const r = await uploadSeatMap({
      ctx: c.get('services'),
      actor,
      eventId: c.req.valid('param').eventId,
      input: { format, body: await c.req.text() },
    });
    return c.json(r, 200);
  });
}
