import { createRoute, z } from '@hono/zod-openapi';
import { HoldRequest, HoldResponse, IdempotencyKey, metrics } from '@onsale/contracts';
import { DomainError } from '../../errors';
import { placeHold } from '../../holds/place-hold';
import type { CellApp } from '../app';
import { admissionCheck, buyerAuth, limitBody } from '../middleware';
import { EventParams, errors } from './schemas';

export const createHoldRoute = createRoute({
  method: 'post',
  path: '/events/{eventId}/holds',
  summary: 'Hold seats and/or general-admission places for an admitted buyer',
  security: [{ buyer: [], admission: [] }],
  middleware: [limitBody(64 * 1024), buyerAuth, admissionCheck] as const,
  request: {
    params: EventParams,
    headers: z.object({ 'idempotency-key': IdempotencyKey }),
    body: { required: true, content: { 'application/json': { schema: HoldRequest } } },
  },
  responses: {
    202: { description: 'Seats held; pay before expiresAt', content: { 'application/json': { schema: HoldResponse } } },
    ...errors,
  },
});

export function registerCreateHold(app: CellApp) {
  app.openapi(createHoldRoute, async (c) => {
    const { eventId } = c.req.valid('param');
    const { seatIds = [], ga = [] } = c.req.valid('json');
    const services = c.get('services');
    const started = performance.now();
    const timer = metrics.holdTransaction.startTimer();
    const result = await placeHold(services.ctx, {
      eventId,
      seatIds,
      ga,
      userId: c.get('userId'),
      buyerEmail: c.get('buyerEmail'),
      idempotencyKey: c.req.valid('header')['idempotency-key'],
      correlationId: c.get('correlationId'),
    })
      .catch((err) => {
        const reason = err instanceof DomainError ? err.code : 'error';
        // An unknown event id is the client's to choose: it must not become a label. placeHold
        // answers an event this cell does not hold with not_found.
        metrics.holdsRefused.inc({ event: reason === 'not_found' ? 'unknown' : eventId, reason });
        throw err;
      })
      .finally(() => {
        timer();
        services.holdLatency.record(performance.now() - started);
      });
    if (!result.replayed) metrics.holdsPlaced.inc({ event: eventId });
    c.header('Location', `/events/${eventId}/orders/${result.body.orderId}`);
    if (result.replayed) c.header('Idempotent-Replayed', 'true');
    return c.json(result.body, 202);
  });
}
