import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { placeEvent } from '../../events/events';
import { actorName } from '../../lib/actors';
import { attemptLoad } from '../../onsale/load';
import { getOnsale } from '../../onsale/status';
import { listDecisions, setReleaseMode } from '../../release-controller/override';
import { asOperator, bearerSecurity } from '../auth';
import type { App } from '../env';
import { DecisionSchema, EventIdParam, EventSchema, OnsaleSchema, toEventDto } from '../schemas';

const placement = createRoute({
  method: 'put',
  path: '/operator/events/{eventId}/placement',
  tags: ['operator'],
  summary: 'Pin an event to a cell, optionally dedicating the cell to it (headline onsale)',
  security: bearerSecurity,
  middleware: [asOperator] as const,
  request: {
    params: EventIdParam,
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z
            .object({ cellId: z.string().min(1), dedicated: z.boolean().optional() })
            .openapi('OperatorPlacement'),
        },
      },
    },
  },
  responses: {
    200: { description: 'Placed', content: { 'application/json': { schema: EventSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict'),
  },
});

const release = createRoute({
  method: 'put',
  path: '/operator/events/{eventId}/release',
  tags: ['operator'],
  summary: 'Pause, resume (auto) or pin R for an event',
  security: bearerSecurity,
  middleware: [asOperator] as const,
  request: {
    params: EventIdParam,
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z
            .object({
              mode: z.enum(['auto', 'paused', 'pinned']),
              rate: z.number().min(0).optional(),
              reason: z.string().max(500).optional(),
            })
            .openapi('ReleaseMode'),
        },
      },
    },
  },
  responses: {
    200: {
      description: 'Set',
      content: {
        'application/json': {
          schema: z.object({ mode: z.string(), rate: z.number(), pinnedRate: z.number().nullable() }),
        },
      },
    },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict'),
  },
});

const decisions = createRoute({
  method: 'get',
  path: '/operator/events/{eventId}/release-decisions',
  tags: ['operator'],
  security: bearerSecurity,
  middleware: [asOperator] as const,
  request: { params: EventIdParam, query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) }) },
  responses: {
    200: {
      description: 'Decisions',
      content: { 'application/json': { schema: z.object({ decisions: z.array(DecisionSchema) }) } },
    },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden'),
  },
});

const load = createRoute({
  method: 'post',
  path: '/operator/events/{eventId}/load',
  tags: ['operator'],
  summary: 'Retry loading the event into its cell now',
  security: bearerSecurity,
  middleware: [asOperator] as const,
  request: { params: EventIdParam },
  responses: {
    200: { description: 'Attempted', content: { 'application/json': { schema: OnsaleSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found'),
  },
});

/** Operator controls over one event. */
export function registerOperatorEvents(app: App) {
  app.openapi(placement, async (c) => {
    return c.json(
      toEventDto(
        await placeEvent({ ctx: c.get('services'), eventId: c.req.valid('param').eventId, input: c.req.valid('json') }),
      ),
      200,
    );
  });
  app.openapi(release, async (c) => {
    const actor = c.get('actor');
    return c.json(
      await setReleaseMode({
        ctx: c.get('services'),
        eventId: c.req.valid('param').eventId,
        input: c.req.valid('json'),
        actor: actorName(actor),
      }),
      200,
    );
  });
  app.openapi(decisions, async (c) => {
    return c.json(
      {
        decisions: await listDecisions({
          ctx: c.get('services'),
          eventId: c.req.valid('param').eventId,
          limit: c.req.valid('query').limit,
        }),
      },
      200,
    );
  });
  app.openapi(load, async (c) => {
    const ctx = c.get('services');
    const { eventId } = c.req.valid('param');
    await attemptLoad({ ctx, eventId, force: true });
    return c.json(await getOnsale({ ctx, eventId }), 200);
  });
}
