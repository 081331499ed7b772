import { loopHealth, metrics, pollingLoop } from '@onsale/contracts';
import { CellReconcilerConfig } from '../config';
import { stripeFromConfig } from '../payments/stripe-client';
import { startWorker } from '../runtime/worker';
import { reconcileOnce } from './reconcile';

const worker = startWorker('reconciler', CellReconcilerConfig);
const health = loopHealth(3 * worker.config.RECONCILE_INTERVAL_MS);
worker.readiness('reconciler', health.probe);
const deps = { ctx: worker.ctx, stripe: stripeFromConfig(worker.config) };
const loop = pollingLoop({
  name: 'reconcile pass',
  log: worker.log,
  intervalMs: worker.config.RECONCILE_INTERVAL_MS,
  onSuccess: health.succeeded,
  pass: async () => {
    const report = await reconcileOnce(deps, {
      graceMs: worker.config.RECONCILE_GRACE_MS,
      batchSize: worker.config.RECONCILE_BATCH_SIZE,
    });
    for (const fix of report.fixed) metrics.reconcilerActions.inc({ kind: fix.kind });
    worker.log.info('reconcile pass', { checked: report.checked, fixed: report.fixed.length });
  },
});
worker.onShutdown(() => loop.stop());
