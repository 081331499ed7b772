import { createRoute, z } from '@hono/zod-openapi';
import { metrics } from '@onsale/contracts';
import type Stripe from 'stripe';
import { DomainError } from '../../errors';
import { acceptStripeEvent } from '../../webhooks/accept';
import type { CellApp } from '../app';
import { limitBody } from '../middleware';
import { errors } from './schemas';

export const stripeWebhookRoute = createRoute({
  method: 'post',
  path: '/webhooks/stripe',
  summary: "Stripe's signed event deliveries; 2xx only once the event and its saga events are committed",
  middleware: [limitBody(512 * 1024)] as const,
  request: { headers: z.object({ 'stripe-signature': z.string().min(1) }) },
  responses: {
    200: {
      description: 'Recorded, a duplicate, or not this cell’s',
      content: { 'application/json': { schema: z.object({ outcome: z.enum(['recorded', 'duplicate', 'ignored']) }) } },
    },
    400: errors[400],
    404: errors[404],
    503: errors[503],
  },
});

export function registerStripeWebhook(app: CellApp) {
  app.openapi(stripeWebhookRoute, async (c) => {
    const stripe = c.get('services').stripe;
    if (!stripe) throw new DomainError('cell_unavailable', 'Stripe webhooks are not configured on this cell');
    // The signature covers the exact bytes: read them raw, verify, and only then parse.
    const raw = await c.req.text();
    let event: Stripe.Event;
    try {
      event = stripe.client.webhooks.constructEvent(
        raw,
        c.req.valid('header')['stripe-signature'],
        stripe.webhookSecret,
      );
    } catch {
      metrics.webhooks.inc({ outcome: 'bad_signature' });
      throw new DomainError('bad_request', 'invalid Stripe signature');
    }
    const outcome = await acceptStripeEvent(c.get('services').ctx, stripe.client, event, c.get('log'));
    metrics.webhooks.inc({ outcome });
    c.get('log').info('stripe event', { stripeEventId: event.id, stripeEventType: event.type, outcome });
    return c.json({ outcome }, 200);
  });
}
