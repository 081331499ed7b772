import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { resumeOnsale } from '../../onsale/sales-control';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam, OnsaleControlSchema } from '../schemas';

const route = createRoute({
  method: 'post',
  path: '/events/{eventId}/onsale/resume',
  tags: ['onsale'],
  summary: 'Resume a paused onsale (manager or owner): its cell sells again and the release controller sets R',
  description:
    'An onsale that is not paused is a 409 naming its status.' +
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

export function registerResumeOnsale(app: App) {
  app.openapi(route, async (c) =>
    c.json(
      await resumeOnsale({ ctx: c.get('services'), actor: c.get('actor'), eventId: c.req.valid('param').eventId }),
      200,
    ),
  );
}
