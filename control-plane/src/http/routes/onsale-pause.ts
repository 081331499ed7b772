import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { pauseOnsale } from '../../onsale/sales-control';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam, OnsaleControlSchema } from '../schemas';

const route = createRoute({
  method: 'post',
  path: '/events/{eventId}/onsale/pause',
  tags: ['onsale'],
  summary:
    'Pause admission to a running onsale (manager or owner): its cell refuses new holds and the waiting room stops releasing',
  description:
    'Holds already taken stay. Recorded as a release decision by the promoter. An onsale that is not running (on sale or sold out) is a 409 naming its status.' +
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

export function registerPauseOnsale(app: App) {
  app.openapi(route, async (c) =>
    c.json(
      await pauseOnsale({ ctx: c.get('services'), actor: c.get('actor'), eventId: c.req.valid('param').eventId }),
      200,
    ),
  );
}
