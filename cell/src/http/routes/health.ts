import { errorResponse } from '@onsale/contracts';
import type { CellApp } from '../app';

/**
 * Liveness answers while the process runs; readiness only while it can write as this epoch.
 * The ticket keys let a gate scanner verify tickets offline.
 */
export function registerHealth(app: CellApp) {
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/.well-known/ticket-keys.json', (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    return c.json(c.get('services').ticketKeys);
  });
  app.get('/readyz', async (c) =>
    (await c.get('services').ready())
      ? c.json({ status: 'ready', cellId: c.get('services').ctx.cellId })
      : errorResponse(c, 'cell_unavailable', 'not ready'),
  );
}
