import { createRoute, z } from '@hono/zod-openapi';
import { DomainError } from '../../errors';
import { orderTimeline } from '../../ops/order-timeline';
import type { CellApp } from '../app';
import { internalAuth } from '../middleware';
import { errors, internalSecurity } from './schemas';

const TimelineEntry = z.object({
  at: z.string().openapi({ example: '2026-12-01T11:00:00.123Z' }),
  source: z.enum(['order', 'hold', 'outbox', 'inbox', 'payment', 'stripe_event', 'ticket', 'incident']),
  what: z.string().openapi({ example: 'inbox.consumed' }),
  details: z.record(z.string(), z.unknown()),
});

export const OrderTimelineBody = z.object({
  orderId: z.string(),
  cellId: z.string(),
  eventId: z.string(),
  status: z.string(),
  correlationId: z.string(),
  entries: z.array(TimelineEntry),
});

export const orderTimelineRoute = createRoute({
  method: 'get',
  path: '/internal/orders/{orderId}/timeline',
  summary: "An order's whole history in time order, from the cell's own tables (for operators)",
  description:
    'The order, its hold, every outbox row (written, published), each consumer that took an event in, ' +
    'the payment, Stripe webhook events, tickets and incidents. No client secret, ticket token or payload body.',
  security: internalSecurity,
  middleware: [internalAuth] as const,
  request: { params: z.object({ orderId: z.string().uuid() }) },
  responses: {
    200: { description: 'The timeline', content: { 'application/json': { schema: OrderTimelineBody } } },
    400: errors[400],
    401: errors[401],
    404: errors[404],
  },
});

export function registerOrderTimeline(app: CellApp) {
  app.openapi(orderTimelineRoute, async (c) => {
    const { orderId } = c.req.valid('param');
    const timeline = await orderTimeline(c.get('services').ctx, orderId);
    if (!timeline) throw new DomainError('not_found', 'no such order in this cell');
    c.header('Cache-Control', 'no-store');
    return c.json(timeline, 200);
  });
}
