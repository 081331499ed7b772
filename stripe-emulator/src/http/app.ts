import { Hono } from 'hono';
import { cors } from 'hono/cors';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { EmulatorControl } from '../control.js';
import { apiError, StripeApiError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { Logger } from '../log.js';
import { authenticate } from './auth.js';
import { controlRoutes } from './control-routes.js';
import type { AppEnv } from './env.js';
import { stripeDocument } from './openapi.js';
import type { Operation } from './operation.js';
import { type HandlerDeps, operationHandler } from './operation-handler.js';

export interface AppDeps extends HandlerDeps {
  operations: Operation[];
  control: EmulatorControl;
  apiVersion: string;
  log: Logger;
  /** When set, the only publishable key accepted; otherwise any `pk_test_` key. */
  publishableKey?: string | undefined;
}

export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.use('*', async (c, next) => {
    const started = performance.now();
    const requestId = newId('req');
    c.set('requestId', requestId);
    await next();
    // The path only: a query string can carry a client secret, and bodies are never logged.
    deps.log('info', 'request', {
      requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      replayed: c.res.headers.get('Idempotent-Replayed') === 'true',
      durationMs: Math.round(performance.now() - started),
    });
  });

  app.route('/__emulator', controlRoutes(deps.control));

  app.use('/v1/*', async (c, next) => {
    c.header('Request-Id', c.get('requestId'));
    c.header('Stripe-Version', c.req.header('Stripe-Version') ?? deps.apiVersion);
    await next();
  });
  // Stripe's API answers browsers on any origin, as Stripe.js calls it from the shop's pages with the publishable
  // key; the preflight is answered before authentication (a browser sends it without the key).
  app.use(
    '/v1/*',
    cors({ origin: '*', allowHeaders: ['Authorization', 'Content-Type', 'Stripe-Version'], maxAge: 600 }),
  );
  app.use('/v1/*', authenticate({ publishableKey: deps.publishableKey }));
  for (const operation of deps.operations) {
    app.on(operation.method, operation.path, operationHandler(operation, deps));
  }

  const document = stripeDocument(deps.operations, deps.apiVersion);
  app.get('/openapi.json', (c) => c.json(document));

  // After every operation's own route: a known path reached with another method is a 405.
  const methods = new Map<string, Set<string>>([['/openapi.json', new Set(['GET'])]]);
  for (const { path, method } of deps.operations) methods.set(path, (methods.get(path) ?? new Set()).add(method));
  for (const [path, allowed] of methods) {
    const allow = [...allowed, ...(allowed.has('GET') ? ['HEAD'] : [])].sort().join(', ');
    app.all(path, (c) => {
      c.header('Allow', allow);
      return c.json(
        { error: { type: 'invalid_request_error', message: `${c.req.method} is not allowed on ${c.req.path}.` } },
        405,
      );
    });
  }

  app.notFound((c) =>
    c.json(
      {
        error: {
          type: 'invalid_request_error',
          message: `Unrecognized request URL (${c.req.method}: ${c.req.path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
        },
      },
      404,
    ),
  );

  app.onError((error, c) => {
    if (error instanceof StripeApiError) return c.json(error.toJSON(), error.status as ContentfulStatusCode);
    deps.log('error', 'unhandled error', { requestId: c.get('requestId'), error: error.message });
    return c.json(apiError().toJSON(), 500);
  });

  return app;
}
