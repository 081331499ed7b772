import type { CellApp } from '../app';
import { registerAvailability } from './availability.get';
import { registerHealth } from './health';
import { registerCreateHold } from './holds.create';
import { registerReleaseHold } from './holds.delete';
import { registerEvacuation } from './internal.evacuation';
import { registerLoadEvent } from './internal.events.put';
import { registerSalesStatus } from './internal.events.sales.put';
import { registerRefundOrder } from './internal.orders.refund.post';
import { registerOrderTimeline } from './internal.orders.timeline.get';
import { registerRevocations } from './internal.revocations.post';
import { registerSignals } from './internal.signals.get';
import { registerMetrics } from './metrics.get';
import { registerGetOrder } from './orders.get';
import { registerTicketsPdf } from './tickets.pdf.get';
import { registerTicketQr } from './tickets.qr.get';
import { registerTicketScanner } from './tickets.scanner.get';
import { registerStripeWebhook } from './webhooks.stripe';

export function registerRoutes(app: CellApp) {
  registerHealth(app);
  registerMetrics(app);
  registerCreateHold(app);
  registerGetOrder(app);
  registerReleaseHold(app);
  registerAvailability(app);
  registerLoadEvent(app);
  registerSalesStatus(app);
  registerEvacuation(app);
  registerSignals(app);
  registerOrderTimeline(app);
  registerRefundOrder(app);
  registerRevocations(app);
  registerTicketsPdf(app);
  registerTicketQr(app);
  registerTicketScanner(app);
  registerStripeWebhook(app);
}
