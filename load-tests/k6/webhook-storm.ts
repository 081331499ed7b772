/**
 * Webhook storm: every Stripe event of an order's payment arrives up to ten times, out of order, at the
 * cell's webhook endpoint through the router; each is answered 2xx and has no second effect. Rates,
 * durations and thresholds: load-tests/scenarios/definition.ts (the Node runner uses the same, and also
 * checks the ledger for second effects, which k6 cannot see).
 *
 *   k6 run -e BASE_URL=… -e CELL_ID=… -e WEBHOOK_SECRET=whsec_… -e STRIPE_SECRET_KEY=sk_test_… \
 *          -e PAYMENT_INTENTS=pi_1,pi_2,… load-tests/k6/webhook-storm.ts
 *
 * PAYMENT_INTENTS: captured intents of orders paid for the test (the Node runner makes its own), fetched
 * from Stripe (STRIPE_API, default https://api.stripe.com) in setup(); WEBHOOK_SECRET: the endpoint's
 * signing secret, so the deliveries pass the signature check.
 */
import exec from 'k6/execution';
import http from 'k6/http';
import { k6Scenario, k6Thresholds, SCENARIOS } from '../scenarios/definition.ts';
import { type Intent, stormDeliveries } from '../scenarios/webhooks.ts';
import { BASE_URL, record, stripeSignature } from './lib.ts';

const scenario = SCENARIOS['webhook-storm'];

export const options = {
  scenarios: { 'webhook-storm': k6Scenario(scenario) },
  thresholds: k6Thresholds(scenario),
};

export function setup() {
  const intents = (__ENV.PAYMENT_INTENTS ?? '').split(',').filter(Boolean);
  if (!__ENV.CELL_ID || !__ENV.WEBHOOK_SECRET || !__ENV.STRIPE_SECRET_KEY || intents.length === 0)
    throw new Error('set CELL_ID, WEBHOOK_SECRET, STRIPE_SECRET_KEY and PAYMENT_INTENTS');
  const api = __ENV.STRIPE_API ?? 'https://api.stripe.com';
  const objects = intents.map((id) => {
    const res = http.get(`${api}/v1/payment_intents/${id}`, {
      headers: { authorization: `Bearer ${__ENV.STRIPE_SECRET_KEY}` },
      tags: { name: 'setup:intent' },
    });
    if (res.status !== 200) throw new Error(`intent ${id}: ${res.status}`);
    return res.json() as Intent;
  });
  return { deliveries: stormDeliveries(objects, scenario.params.maxDeliveries!, `k6-${Date.now()}`) };
}

export default function (data: { deliveries: string[] }) {
  const payload = data.deliveries[exec.scenario.iterationInTest % data.deliveries.length]!;
  const res = http.post(`${BASE_URL}/cells/${__ENV.CELL_ID}/webhooks/stripe`, payload, {
    headers: {
      'content-type': 'application/json',
      'stripe-signature': stripeSignature(payload, __ENV.WEBHOOK_SECRET!),
    },
    tags: { name: 'webhook' },
  });
  record(scenario, res);
}
