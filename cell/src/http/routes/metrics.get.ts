import { METRICS_CONTENT_TYPE, metrics } from '@onsale/contracts';
import type { CellApp } from '../app';

/** Prometheus' scrape: the process's counters, and the cell's ledger and backbone gauges read now. */
export function registerMetrics(app: CellApp) {
  app.get('/metrics', async (c) => {
    await c
      .get('services')
      .refreshMetrics()
      .catch((err) => c.get('log').warn('metrics refresh failed', { err }));
    return c.body(await metrics.render(), 200, { 'content-type': METRICS_CONTENT_TYPE });
  });
}
