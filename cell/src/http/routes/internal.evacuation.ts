import { createRoute, z } from '@hono/zod-openapi';
import { blockedSeats, blockSeats, freezeSales, ledgerView, unblockSeats, unfreezeSales } from '../../inventory/freeze';
import type { CellApp } from '../app';
import { internalAuth, limitBody } from '../middleware';
import { EventParams, errors, internalSecurity } from './schemas';

/** The cell's side of evacuating an event (control plane only): freeze, ledger view, blocked seats. */

const Frozen = z.object({ eventId: z.string(), frozen: z.boolean() });
const SeatList = z.object({ sourceCell: z.string().min(1), seatIds: z.array(z.string().uuid()).max(200_000) });
const json = <T extends z.ZodTypeAny>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

export const freezeRoute = createRoute({
  method: 'put',
  path: '/internal/events/{eventId}/sales-freeze',
  summary: 'Freeze the event: new holds are refused (event_moving); holds already committed carry on. Idempotent',
  security: internalSecurity,
  middleware: [limitBody(16 * 1024 * 1024), internalAuth] as const,
  request: { params: EventParams },
  responses: { 200: json(Frozen, 'Frozen'), 401: errors[401], 404: errors[404], 503: errors[503] },
});

export const unfreezeRoute = createRoute({
  method: 'delete',
  path: '/internal/events/{eventId}/sales-freeze',
  summary: 'Let the event sell again with this per-order limit. Idempotent',
  security: internalSecurity,
  middleware: [limitBody(16 * 1024 * 1024), internalAuth] as const,
  request: {
    params: EventParams,
    query: z.object({ maxSeatsPerOrder: z.coerce.number().int().min(1).max(100) }),
  },
  responses: { 200: json(Frozen, 'Selling'), 400: errors[400], 401: errors[401], 404: errors[404], 503: errors[503] },
});

export const ledgerRoute = createRoute({
  method: 'get',
  path: '/internal/events/{eventId}/ledger',
  summary: "The event's seats sold or held here, and what is still in flight",
  security: internalSecurity,
  middleware: [limitBody(16 * 1024 * 1024), internalAuth] as const,
  request: { params: EventParams },
  responses: {
    200: json(
      z.object({
        eventId: z.string(),
        frozen: z.boolean(),
        occupiedSeatIds: z.array(z.string()),
        ticketedSeats: z.number(),
        activeHolds: z.number(),
        openOrders: z.number(),
      }),
      'Ledger view',
    ),
    401: errors[401],
    404: errors[404],
  },
});

const BlockAnswer = z.object({ eventId: z.string(), blocked: z.number() });

export const blockRoute = createRoute({
  method: 'post',
  path: '/internal/events/{eventId}/blocked-seats',
  summary: 'Block seats the source cell sold or holds. Idempotent',
  security: internalSecurity,
  middleware: [limitBody(16 * 1024 * 1024), internalAuth] as const,
  request: { params: EventParams, body: { required: true, content: { 'application/json': { schema: SeatList } } } },
  responses: {
    200: json(BlockAnswer, 'Blocked'),
    400: errors[400],
    401: errors[401],
    404: errors[404],
    413: errors[413],
    503: errors[503],
  },
});

export const unblockRoute = createRoute({
  method: 'post',
  path: '/internal/events/{eventId}/blocked-seats/release',
  summary: 'Release blocked seats the source reports free. Idempotent',
  security: internalSecurity,
  middleware: [limitBody(16 * 1024 * 1024), internalAuth] as const,
  request: { params: EventParams, body: { required: true, content: { 'application/json': { schema: SeatList } } } },
  responses: {
    200: json(BlockAnswer, 'Released'),
    400: errors[400],
    401: errors[401],
    413: errors[413],
    503: errors[503],
  },
});

export const blockedRoute = createRoute({
  method: 'get',
  path: '/internal/events/{eventId}/blocked-seats',
  summary: 'Seats blocked here for a source cell',
  security: internalSecurity,
  middleware: [limitBody(16 * 1024 * 1024), internalAuth] as const,
  request: { params: EventParams, query: z.object({ sourceCell: z.string().min(1) }) },
  responses: {
    200: json(z.object({ eventId: z.string(), seatIds: z.array(z.string()) }), 'Blocked seats'),
    400: errors[400],
    401: errors[401],
  },
});

export function registerEvacuation(app: CellApp) {
  app.openapi(freezeRoute, async (c) => {
    const { eventId } = c.req.valid('param');
    return c.json(await freezeSales(c.get('services').ctx, eventId), 200);
  });
  app.openapi(unfreezeRoute, async (c) => {
    const { eventId } = c.req.valid('param');
    const { maxSeatsPerOrder } = c.req.valid('query');
    return c.json(await unfreezeSales(c.get('services').ctx, eventId, maxSeatsPerOrder), 200);
  });
  app.openapi(ledgerRoute, async (c) => {
    const { eventId } = c.req.valid('param');
    return c.json(await ledgerView(c.get('services').ctx, eventId), 200);
  });
  app.openapi(blockRoute, async (c) => {
    const { eventId } = c.req.valid('param');
    const { sourceCell, seatIds } = c.req.valid('json');
    const r = await blockSeats(c.get('services').ctx, eventId, sourceCell, seatIds);
    return c.json({ eventId, blocked: r.blocked }, 200);
  });
  app.openapi(unblockRoute, async (c) => {
    const { eventId } = c.req.valid('param');
    const { sourceCell, seatIds } = c.req.valid('json');
    const r = await unblockSeats(c.get('services').ctx, eventId, sourceCell, seatIds);
    return c.json({ eventId, blocked: r.blocked }, 200);
  });
  app.openapi(blockedRoute, async (c) => {
    const { eventId } = c.req.valid('param');
    const { sourceCell } = c.req.valid('query');
    return c.json({ eventId, seatIds: await blockedSeats(c.get('services').ctx, eventId, sourceCell) }, 200);
  });
}
