import { OpenAPIHono } from '@hono/zod-openapi';
import {
  allowedMethods,
  errorResponse,
  httpMetrics,
  limitBody,
  refuseInvalidInput,
  renderError,
  requestIds,
  routeNotFound,
  withBodyRefusals,
} from '@onsale/contracts';
import { CellCallError, cellCallRefusal } from '../cells/client';
import { createConsoleApp } from '../console/app';
import type { Services } from '../context';
import { createShopApp } from '../shop/app';
import type { App, AppEnv } from './env';
import { registerBotReport } from './routes/bot-report';
import { registerCatalogPage } from './routes/catalog-get';
import { registerCatalogSeatMap } from './routes/catalog-seat-map-get';
import { registerDirectory } from './routes/directory';
import { registerEventPlacement } from './routes/event-placement';
import { registerCreateEvent } from './routes/events-create';
import { registerGetEvent } from './routes/events-get';
import { registerListEvents } from './routes/events-list';
import { registerUpdateEvent } from './routes/events-update';
import { registerHealth, registerMetrics } from './routes/health';
import { registerJwks } from './routes/jwks';
import { registerOnsaleControls } from './routes/onsale-control';
import { registerGetOnsale } from './routes/onsale-get';
import { registerScheduleOnsale } from './routes/onsale-put';
import { registerOperatorAdmission } from './routes/operator-admission';
import { registerOperatorCells } from './routes/operator-cells';
import { registerOperatorDoor } from './routes/operator-door';
import { registerOperatorEvacuations } from './routes/operator-evacuations';
import { registerOperatorEvents } from './routes/operator-events';
import { registerOperatorTenants } from './routes/operator-tenants';
import { registerPresaleBuyer } from './routes/presale-buyer';
import { registerPresaleLottery } from './routes/presale-lottery';
import { registerPresalePromoter } from './routes/presale-promoter';
import { registerQueueChallenge } from './routes/queue-challenge';
import { registerQueueFairness } from './routes/queue-fairness';
import { registerJoinQueue } from './routes/queue-join';
import { registerQueueMe } from './routes/queue-me';
import { registerQueuePoll } from './routes/queue-poll';
import { registerReleaseDecisions } from './routes/release-decisions';
import { registerRefundOrder } from './routes/sales-order-refund';
import { registerSalesSections } from './routes/sales-sections';
import { registerSalesSettlement } from './routes/sales-settlement';
import { registerSalesSummary } from './routes/sales-summary';
import { registerSalesTimeline } from './routes/sales-timeline';
import { registerGetSeatMap } from './routes/seat-map-get';
import { registerPutSeatMap } from './routes/seat-map-put';
import { registerPutTierFees } from './routes/tier-fees-put';

/** The control plane's HTTP API: one error body, request ids, services on the context. */
export function createApp(services: Services): App {
  const app: App = new OpenAPIHono<AppEnv>({
    defaultHook: refuseInvalidInput,
  });

  app.use(httpMetrics());
  app.use('*', async (c, next) => {
    const { requestId, correlationId } = requestIds(c.req.header('x-correlation-id'));
    c.set('requestId', requestId);
    c.set('services', services);
    c.set('log', services.log.child({ requestId, correlationId }));
    c.header('x-request-id', requestId);
    c.header('x-correlation-id', correlationId);
    const started = performance.now();
    await next();
    services.log.info('request', {
      requestId,
      correlationId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round(performance.now() - started),
    });
  });
  app.use(
    '*',
    limitBody(services.config.MAX_BODY_BYTES, (c) =>
      errorResponse(c, 'payload_too_large', `the body is larger than ${services.config.MAX_BODY_BYTES} bytes`),
    ),
  );
  app.onError(renderError((err) => (err instanceof CellCallError ? cellCallRefusal(err) : undefined)));
  app.notFound(routeNotFound((path) => allowedMethods(app.routes, path)));

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
  });
  for (const register of [
    registerHealth,
    registerMetrics,
    registerJwks,
    registerDirectory,
    registerCreateEvent,
    registerListEvents,
    registerGetEvent,
    registerUpdateEvent,
    registerEventPlacement,
    registerPutSeatMap,
    registerPutTierFees,
    registerGetSeatMap,
    registerCatalogPage,
    registerCatalogSeatMap,
    registerScheduleOnsale,
    registerGetOnsale,
    registerOnsaleControls,
    registerReleaseDecisions,
    registerQueueChallenge,
    registerJoinQueue,
    registerQueueMe,
    registerQueuePoll,
    registerQueueFairness,
    registerPresalePromoter,
    registerPresaleBuyer,
    registerPresaleLottery,
    registerBotReport,
    registerOperatorTenants,
    registerOperatorCells,
    registerOperatorEvents,
    registerOperatorDoor,
    registerOperatorAdmission,
    registerOperatorEvacuations,
    registerSalesSummary,
    registerSalesTimeline,
    registerSalesSections,
    registerSalesSettlement,
    registerRefundOrder,
  ]) {
    register(app);
  }
  // The promoter console: HTML pages with their own session, outside the JSON API's document.
  app.route('/console', createConsoleApp(services, services.config));
  // The buyer's pages, likewise HTML outside the document; their script uses the public JSON API through the edge.
  app.route('/shop', createShopApp(services, services.config));
  const info = { title: 'Onsale control plane', version: '1.0.0' };
  app.get('/openapi.json', (c) => c.json(withBodyRefusals(app.getOpenAPI31Document({ openapi: '3.1.0', info }))));
  return app;
}
