import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { cancelOnsale, pauseOnsale, resumeOnsale } from '../../onsale/sales-control';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam, OnsaleControlSchema } from '../schemas';

/** The promoter's controls of a sale, one route each: the same verbs the console's buttons call. */
const CONTROLS = [
  {
    path: 'pause',
    verb: pauseOnsale,
    summary:
      'Pause admission to a running onsale (manager or owner): its cell refuses new holds and the waiting room stops releasing',
    description:
      'Holds already taken stay. Recorded as a release decision by the promoter. An onsale that is not running ' +
      '(on sale or sold out) is a 409 naming its status.',
  },
  {
    path: 'resume',
    verb: resumeOnsale,
    summary: 'Resume a paused onsale (manager or owner): its cell sells again and the release controller sets R',
    description: 'An onsale that is not paused is a 409 naming its status.',
  },
  {
    path: 'cancel',
    verb: cancelOnsale,
    summary:
      'Cancel an onsale (manager or owner): before it starts the event is a draft again; once started its cell ends every order and the event ends',
    description:
      "A started onsale's cell releases holds, refunds paid orders through the saga and voids tickets (counted in " +
      '`canceled`); repeating it while the event has not ended finishes what a failed call left. An ended event, or ' +
      'a scheduled one whose waiting room has opened, is a 409.',
  },
] as const;

export function registerOnsaleControls(app: App) {
  for (const control of CONTROLS) {
    const route = createRoute({
      method: 'post',
      path: `/events/{eventId}/onsale/${control.path}`,
      tags: ['onsale'],
      summary: control.summary,
      description: `${control.description} The cell is told first: a cell that does not answer is a 503 cell_unavailable with Retry-After, and nothing changes.`,
      security: bearerSecurity,
      middleware: [asPromoter] as const,
      request: { params: EventIdParam },
      responses: {
        200: {
          description: 'The event after the change',
          content: { 'application/json': { schema: OnsaleControlSchema } },
        },
        ...errorResponses(
          'validation_failed',
          'unauthenticated',
          'forbidden',
          'not_found',
          'conflict',
          'cell_unavailable',
        ),
      },
    });
    app.openapi(route, async (c) =>
      c.json(
        await control.verb({ ctx: c.get('services'), actor: c.get('actor'), eventId: c.req.valid('param').eventId }),
        200,
      ),
    );
  }
}
