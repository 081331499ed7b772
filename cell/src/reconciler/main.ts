import { CellReconcilerConfig } from '../config';
import { stripeFromConfig } from '../payments/stripe-client';
import { loopHealth, startWorker } from '../runtime/worker';
import { reconcileOnce } from './reconcile';

const worker = startWorker('reconciler', CellReconcilerConfig);
const health = loopHealth(3 * worker.config.RECONCILE_INTERVAL_MS);
worker.readiness('reconciler', health.probe);
const deps = { ctx: worker.ctx, stripe: stripeFromConfig(worker.config) };
let stopping = false;
let wake: () => void = () => {};

async function run() {
  while (!stopping) {
    const report = await reconcileOnce(deps, {
      graceMs: worker.config.RECONCILE_GRACE_MS,
      batchSize: worker.config.RECONCILE_BATCH_SIZE,
    }).catch((err) => {
      worker.log.warn('reconcile pass failed', { err });
      return null;
    });
    if (report) {
      health.succeeded();
      worker.log.info('reconcile pass', { checked: report.checked, fixed: report.fixed.length });
    }
    await new Promise<void>((r) => {
      wake = r;
      setTimeout(r, worker.config.RECONCILE_INTERVAL_MS);
    });
  }
}
const running = run();
worker.onShutdown(async () => {
  stopping = true;
  wake();
  await running;
});
