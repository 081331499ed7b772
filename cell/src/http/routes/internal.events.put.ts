import { createRoute } from '@hono/zod-openapi';
import { EventLoad, EventLoadAnswer } from '@onsale/contracts';
import { DomainError } from '../../errors';
import { loadEvent } from '../../inventory/load-event';
import type { CellApp } from '../app';
import { internalAuth, limitBody } from '../middleware';
import { EventParams, errors, internalSecurity } from './schemas';

export const loadEventRoute = createRoute({
  method: 'put',
  path: '/internal/events/{eventId}',
  summary: 'Load an event and its seat map into this cell (control plane only; idempotent)',
  security: internalSecurity,
  middleware: [limitBody(64 * 1024 * 1024), internalAuth] as const,
  request: {
    params: EventParams,
    body: { required: true, content: { 'application/json': { schema: EventLoad } } },
  },
  responses: {
    200: {
      description: 'Loaded (created) or already loaded',
      content: { 'application/json': { schema: EventLoadAnswer } },
    },
    400: errors[400],
    401: errors[401],
    409: errors[409],
    503: errors[503],
  },
});

export function registerLoadEvent(app: CellApp) {
  app.openapi(loadEventRoute, async (c) => {
    const { eventId } = c.req.valid('param');
    const body = c.req.valid('json');
    if (body.eventId !== eventId) {
      throw new DomainError('validation_failed', 'eventId differs from the path', {
        issues: [{ path: 'eventId', message: 'must equal the path eventId' }],
      });
    }
    return c.json(await loadEvent(c.get('services').ctx, body), 200);
  });
}
