import { errorResponse, type Logger, methodsByPath, type RouterMetrics, routeNotFound } from '@onsale/contracts';
import { Hono } from 'hono';
import type { RouterConfig } from '../config';
import type { Directory } from '../directory/directory';
import type { Upstreams } from '../proxy/upstreams';
import type { RouterEnv } from './env';
import { beginExchange, exchangeHeaders } from './exchange';
import { gatherMyOrders } from './my-orders';
import { routerDocument } from './openapi';

interface OwnDeps {
  config: RouterConfig;
  directory: Directory;
  metrics: RouterMetrics;
  upstreams: Upstreams;
  log: Logger;
}

/**
 * What the router answers itself: /healthz, /readyz, its OpenAPI document and the buyer's orders gathered
 * from every cell (/me/orders, my-orders.ts), and 405 with Allow for
 * another method on them. `serves` tells the router's front door which paths these are. Not /metrics: the internet
 * reaches this port, and the metrics are served on HEALTH_PORT (router.ts).
 */
export function createOwnEndpoints({ config, directory, metrics, upstreams, log }: OwnDeps) {
  const app = new Hono<RouterEnv>();

  app.use(async (c, next) => {
    const exchange = beginExchange(c.env.incoming, c.env.outgoing, metrics, log);
    exchange.upstream = 'router';
    c.set('requestId', exchange.requestId);
    c.set('correlationId', exchange.correlationId);
    for (const [name, value] of Object.entries(exchangeHeaders(exchange))) c.header(name, value);
    await next();
  });
  app.onError((err, c) => {
    log.error('request failed', { requestId: c.get('requestId'), err });
    return errorResponse(c, 'internal', 'internal error');
  });

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', (c) => {
    const dir = directory.current;
    return dir
      ? c.json({ status: 'ready', directoryVersion: dir.version })
      : errorResponse(c, 'cell_unavailable', 'the directory is not loaded yet', {
          details: { status: 'directory_unavailable' },
          retryAfter: config.RETRY_AFTER_SECONDS,
        });
  });
  app.get('/me/orders', gatherMyOrders({ config, directory, upstreams, log }));
  const document = routerDocument(config);
  app.get('/openapi.json', (c) => c.json(document));

  // Registered last, so the table holds exactly the endpoints above.
  const ownMethods = methodsByPath([...app.routes]);
  app.all('*', routeNotFound(ownMethods));

  return { app, serves: (pathname: string) => ownMethods(pathname).length > 0 };
}
