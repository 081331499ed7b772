import { createRoute } from '@hono/zod-openapi';
import { SalesStatusAnswer, SalesStatusRequest } from '@onsale/contracts';
import { setSalesStatus } from '../../inventory/sales-status';
import type { CellApp } from '../app';
import { internalAuth, limitBody } from '../middleware';
import { EventParams, errors, internalSecurity } from './schemas';

export const salesStatusRoute = createRoute({
  method: 'put',
  path: '/internal/events/{eventId}/sales',
  summary: 'Pause, resume or cancel the sale of an event in this cell (control plane only; idempotent)',
  security: internalSecurity,
  middleware: [limitBody(4 * 1024), internalAuth] as const,
  request: {
    params: EventParams,
    body: { required: true, content: { 'application/json': { schema: SalesStatusRequest } } },
  },
  responses: {
    200: {
      description: 'The sale status is set; a cancel reports what it ended in this call',
      content: { 'application/json': { schema: SalesStatusAnswer } },
    },
    400: errors[400],
    401: errors[401],
    404: errors[404],
    409: errors[409],
    503: errors[503],
  },
});

export function registerSalesStatus(app: CellApp) {
  app.openapi(salesStatusRoute, async (c) => {
    const { eventId } = c.req.valid('param');
    const body = c.req.valid('json');
    const result = await setSalesStatus(c.get('services').ctx, {
      eventId,
      status: body.status,
      reason: body.reason,
      correlationId: c.get('correlationId'),
    });
    return c.json(result, 200);
  });
}
