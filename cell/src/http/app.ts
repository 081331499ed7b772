import { OpenAPIHono } from '@hono/zod-openapi';
import {
  allowedMethods,
  DomainError,
  httpMetrics,
  httpTracing,
  refuseInvalidInput,
  renderError,
  requestIds,
  routeNotFound,
  withBodyRefusals,
} from '@onsale/contracts';
import { EpochFencedError } from '../db/tx';
import { TicketStoreUnavailable } from '../tickets/store';
import type { CellEnv } from './env';
import { registerRoutes } from './routes';
import type { CellServices } from './services';

/** The cell's HTTP surface: request ids, one error body, contracts checked by zod, OpenAPI served. */
export function createCellApp(services: CellServices) {
  const app = new OpenAPIHono<CellEnv>({
    defaultHook: refuseInvalidInput,
  });

  app.use(httpTracing());
  app.use(httpMetrics());
  app.use(async (c, next) => {
    const { requestId, correlationId } = requestIds(c.req.header('x-correlation-id'));
    c.set('requestId', requestId);
    c.set('correlationId', correlationId);
    c.set('services', services);
    c.set('log', services.ctx.log.child({ requestId, correlationId }));
    c.header('X-Request-Id', requestId);
    c.header('X-Correlation-Id', correlationId);
    await next();
  });
  app.onError(renderError(dependencyRefusal));
  app.notFound(routeNotFound((path) => allowedMethods(app.routes, path)));
  app.openAPIRegistry.registerComponent('securitySchemes', 'buyer', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'admission', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Admission-Token',
    description:
      'The admission token the waiting room issued. One bound to a device key (its cnf.jkt claim, RFC 9449) also needs a `DPoP` header on every request: a JWT with header {typ: "dpop+jwt", alg: "ES256", jwk: the public P-256 key} and claims {htm: the method, htu: the request URL without query, iat: unix seconds (at most 60 s old), jti: unique, used once, ath: base64url(SHA-256(the admission token))}, signed by that key. contracts/src/device-proof.ts makes one with WebCrypto in a browser. A missing or wrong proof is a 403 admission_invalid with details.reason dpop_* (dpop_missing, dpop_key_mismatch, dpop_replayed, ...).',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'internal', { type: 'http', scheme: 'bearer' });

  registerRoutes(app);
  const info = { title: `Onsale purchase cell ${services.ctx.cellId}`, version: '1' };
  app.get('/openapi.json', (c) => c.json(withBodyRefusals(app.getOpenAPI31Document({ openapi: '3.1.0', info }))));
  return app;
}
export type CellApp = OpenAPIHono<CellEnv>;

/**
 * Failures of what the cell depends on that a client can wait out: a fenced writer (the router
 * follows the new epoch) and an unreachable ticket store (503 with Retry-After, not a 500).
 */
function dependencyRefusal(err: Error) {
  if (err instanceof EpochFencedError)
    return new DomainError('epoch_fenced', 'this cell writer is fenced; retry through the router');
  if (err instanceof TicketStoreUnavailable)
    return new DomainError('cell_unavailable', 'ticket documents cannot be read right now; try again shortly');
}
