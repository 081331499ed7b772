import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, Instant, MAX_SEATS_PER_HOLD } from '@onsale/contracts';
import { scheduleOnsale } from '../../onsale/schedule';
import { getOnsale } from '../../onsale/status';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam, OnsaleSchema } from '../schemas';

const taskCount = z.number().int().min(0).max(10_000);
const RoleCapacity = z
  .object({ min: taskCount, max: taskCount })
  .strict()
  .refine((c) => c.min <= c.max, { message: 'min must not exceed max', path: ['min'] });

/** Tasks per role while the onsale is warm, a capacity plan's figures; a role left out takes the process default. */
const Capacity = z
  .object({
    router: RoleCapacity.optional(),
    waitingRoom: RoleCapacity.optional(),
    cellApi: RoleCapacity.optional(),
    cellWorkers: RoleCapacity.optional(),
  })
  .strict()
  .openapi('OnsaleCapacity');

export const ScheduleBody = z
  .object({
    roomOpensAt: Instant,
    onsaleAt: Instant,
    perBuyerLimit: z.number().int().min(1).max(MAX_SEATS_PER_HOLD),
    maxReleaseRate: z.number().int().min(1).max(100_000),
    minReleaseRate: z.number().int().min(0).max(100_000).optional(),
    maxActiveShoppers: z.number().int().min(1).max(10_000_000).nullable().optional(),
    holdTtlSeconds: z.number().int().min(30).max(3600).optional(),
    capacity: Capacity.optional(),
  })
  .strict()
  .openapi('ScheduleOnsale');

const route = createRoute({
  method: 'put',
  path: '/events/{eventId}/onsale',
  tags: ['onsale'],
  summary: 'Schedule or reschedule the onsale (manager or owner); the event is then loaded into its cell',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: {
    params: EventIdParam,
    body: { required: true, content: { 'application/json': { schema: ScheduleBody } } },
  },
  responses: {
    200: { description: 'Scheduled', content: { 'application/json': { schema: OnsaleSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'cell_unavailable'),
  },
});

export function registerScheduleOnsale(app: App) {
  app.openapi(route, async (c) => {
    const actor = c.get('actor');
    const ctx = c.get('services');
    const b = c.req.valid('json');
    const { eventId } = c.req.valid('param');
    await scheduleOnsale({
      ctx,
      actor,
      eventId,
      input: { ...b, roomOpensAt: new Date(b.roomOpensAt), onsaleAt: new Date(b.onsaleAt) },
    });
    return c.json(await getOnsale({ ctx, tenantId: actor.tenantId, eventId }), 200);
  });
}
