import { loopHealth, metrics, pollingLoop } from '@onsale/contracts';
import { stripeFromConfig } from '../payments/stripe-client';
import type { CELL_ROLES } from '../runtime/roles';
import type { StartRole } from '../runtime/worker';
import { reconcileLostOrders } from './lost-orders';
import { reconcileOnce } from './reconcile';

export const startReconciler: StartRole<typeof CELL_ROLES.reconciler> = async (worker, deps = {}) => {
  const health = loopHealth(3 * worker.config.RECONCILE_INTERVAL_MS);
  worker.readiness('reconciler', health.probe);
  const reconcile = { ctx: worker.ctx, stripe: deps.stripe ?? stripeFromConfig(worker.config) };
  const loop = pollingLoop({
    name: 'reconcile pass',
    log: worker.log,
    intervalMs: worker.config.RECONCILE_INTERVAL_MS,
    onSuccess: health.succeeded,
    pass: async () => {
      const report = await reconcileOnce(reconcile, {
        graceMs: worker.config.RECONCILE_GRACE_MS,
        batchSize: worker.config.RECONCILE_BATCH_SIZE,
      });
      const lost = await reconcileLostOrders(reconcile, {
        windowMs: worker.config.RECONCILE_LOST_ORDER_WINDOW_MS,
        graceMs: worker.config.RECONCILE_GRACE_MS,
      });
      for (const fix of [...report.fixed, ...lost.fixed]) metrics.reconcilerActions.inc({ kind: fix.kind });
      worker.log.info('reconcile pass', {
        checked: report.checked,
        fixed: report.fixed.length,
        lostOrdersSettled: lost.fixed.length,
      });
    },
  });
  worker.onShutdown(() => loop.stop());
};
