import { createRoute } from '@hono/zod-openapi';
import { CellSignals } from '@onsale/contracts';
import type { CellApp } from '../app';
import { internalAuth } from '../middleware';
import { errors, internalSecurity } from './schemas';

export const signalsRoute = createRoute({
  method: 'get',
  path: '/internal/signals',
  summary: "The cell's health signals, read by the release controller",
  security: internalSecurity,
  middleware: [internalAuth] as const,
  responses: {
    200: { description: 'Signals', content: { 'application/json': { schema: CellSignals } } },
    401: errors[401],
  },
});

export function registerSignals(app: CellApp) {
  app.openapi(signalsRoute, async (c) => c.json(await c.get('services').signals(), 200));
}
