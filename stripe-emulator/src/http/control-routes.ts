import { type Context, Hono } from 'hono';
import type { z } from 'zod';
import type { EmulatorControl } from '../control.js';
import {
  failureInput,
  latencyInput,
  outageInput,
  webhookEndpointInput,
  webhookFaultsInput,
} from '../control-schemas.js';
import type { AppEnv } from './env.js';

function controlError(c: Context<AppEnv>, status: 400 | 404, message: string): Response {
  return c.json({ error: { type: 'invalid_request_error', message } }, status);
}

async function readJson<S extends z.ZodType>(
  c: Context<AppEnv>,
  schema: S,
): Promise<{ ok: true; value: z.output<S> } | { ok: false; response: Response }> {
  const body: unknown = await c.req.json().catch(() => undefined);
  const result = schema.safeParse(body ?? {});
  if (result.success) return { ok: true, value: result.data };
  const message = result.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ');
  return { ok: false, response: controlError(c, 400, message) };
}

/** The emulator's own API under `/__emulator`; Stripe has no such thing. No authentication. */
export function controlRoutes(control: EmulatorControl): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();

  routes.get('/health', (c) => c.json({ ok: true }));

  routes.get('/webhook-endpoints', (c) => c.json({ data: control.webhookEndpoints() }));
  routes.post('/webhook-endpoints', async (c) => {
    const input = await readJson(c, webhookEndpointInput);
    return input.ok ? c.json(control.addWebhookEndpoint(input.value), 201) : input.response;
  });
  routes.delete('/webhook-endpoints/:id', (c) =>
    control.removeWebhookEndpoint(c.req.param('id'))
      ? c.json({ id: c.req.param('id'), deleted: true })
      : controlError(c, 404, `No such webhook endpoint: '${c.req.param('id')}'`),
  );

  routes.get('/webhook-faults', (c) => c.json(control.webhookFaults()));
  routes.put('/webhook-faults', async (c) => {
    const input = await readJson(c, webhookFaultsInput);
    return input.ok ? c.json(control.setWebhookFaults(input.value)) : input.response;
  });

  routes.get('/webhook-deliveries', (c) =>
    c.json({ outstanding: control.outstandingWebhooks(), attempts: control.webhookAttempts() }),
  );

  routes.get('/failures', (c) => c.json({ data: control.pendingFailures() }));
  routes.post('/failures', async (c) => {
    const input = await readJson(c, failureInput);
    if (!input.ok) return input.response;
    control.injectFailures(input.value.operation, input.value.count, input.value.mode);
    return c.json({ data: control.pendingFailures() }, 201);
  });

  // The provider down for a while: every API call answers 500 api_error until it ends (webhooks already queued
  // still go out: Stripe's event delivery is not its API).
  routes.get('/outage', (c) => c.json(control.outage()));
  routes.put('/outage', async (c) => {
    const input = await readJson(c, outageInput);
    return input.ok ? c.json(control.startOutage(input.value.seconds)) : input.response;
  });

  routes.get('/latency', (c) => c.json(control.latencies()));
  routes.put('/latency', async (c) => {
    const input = await readJson(c, latencyInput);
    if (!input.ok) return input.response;
    control.setLatency(input.value.operation, input.value.ms);
    return c.json(control.latencies());
  });

  routes.get('/counters', (c) => c.json(control.counters()));
  routes.get('/payment-intents', (c) => c.json({ data: control.paymentIntents() }));
  routes.get('/charges', (c) => c.json({ data: control.charges() }));

  routes.post('/reset', (c) => {
    control.reset();
    return c.json({ reset: true });
  });

  return routes;
}
