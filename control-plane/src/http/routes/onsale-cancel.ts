import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { cancelOnsale } from '../../onsale/sales-control';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam, OnsaleControlSchema } from '../schemas';

const route = createRoute({
  method: 'post',
  path: '/events/{eventId}/onsale/cancel',
  tags: ['onsale'],
  summary:
    'Cancel an onsale (manager or owner): before it starts the event is a draft again; once started its cell ends every order and the event ends',
  description:
    "A started onsale's cell releases holds, refunds paid orders through the saga and voids tickets (the counts are in `canceled`); repeating it while the event has not ended finishes what a failed call left. An ended event, or a scheduled one whose waiting room has opened, is a 409." +
    ' The cell is told first: a cell that does not answer is a 503 cell_unavailable with Retry-After, and nothing changes.',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: { params: EventIdParam },
  responses: {
    200: {
      description: 'The event after the change',
      content: { 'application/json': { schema: OnsaleControlSchema } },
    },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'cell_unavailable'),
  },
});

export function registerCancelOnsale(app: App) {
  app.openapi(route, async (c) =>
    c.json(
      await cancelOnsale({ ctx: c.get('services'), actor: c.get('actor'), eventId: c.req.valid('param').eventId }),
      200,
    ),
  );
}
