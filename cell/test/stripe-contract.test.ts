import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/local-platform/launch';
import {
  cancelIntent,
  captureIntent,
  createIntent,
  findIntentForOrder,
  latestRefund,
  refundIntent,
  retrieveIntent,
} from '../src/payments/stripe-calls';
import { createStripeClient } from '../src/payments/stripe-client';

/**
 * Every request the payment worker, the webhook endpoint and the reconciler send to Stripe,
 * checked against Stripe's own `stripe-mock`, which validates each request against Stripe's
 * published API description. The emulator proves behaviour; this proves the requests are
 * ones Stripe itself accepts (parameter names, types, enums).
 */
const INSTALL = 'go install github.com/stripe/stripe-mock@v0.203.0';

function findStripeMock(): string {
  const candidates = [
    process.env.STRIPE_MOCK_BIN,
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'stripe-mock')),
    join(process.env.GOPATH ?? join(homedir(), 'go'), 'bin', 'stripe-mock'),
  ].filter((p): p is string => Boolean(p));
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      `stripe-mock is not installed (looked in STRIPE_MOCK_BIN, PATH and $GOPATH/bin). Install it with: ${INSTALL}`,
    );
  }
  return found;
}

let mock: ChildProcess;
let stripe: Stripe;
const orderId = '6f1c1c2e-1111-4222-8333-444455556666';

beforeAll(async () => {
  const binary = findStripeMock();
  const [http, https] = [await freePort(), await freePort()];
  mock = spawn(binary, ['-http-addr', `127.0.0.1:${http}`, '-https-addr', `127.0.0.1:${https}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const started = new Promise<void>((resolve, reject) => {
    let output = '';
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Listening for HTTP')) resolve();
    };
    mock.stdout?.on('data', read);
    mock.stderr?.on('data', read);
    mock.once('exit', (code) => reject(new Error(`stripe-mock exited with ${code}: ${output}`)));
  });
  await started;
  stripe = createStripeClient({
    secretKey: 'sk_test_123',
    apiBase: `http://127.0.0.1:${http}`,
    maxNetworkRetries: 0,
    timeoutMs: 5_000,
  });
});
afterAll(() => {
  mock?.kill('SIGTERM');
});

describe("the platform's Stripe requests against stripe-mock", () => {
  it('stripe-mock refuses what Stripe would refuse (the check is live)', async () => {
    await expect(
      stripe.paymentIntents.create({ amount: 5_000, currency: 'eur', capture_method: 'sometimes' as 'manual' }),
    ).rejects.toMatchObject({ type: 'StripeInvalidRequestError' });
  });

  it('creates a manual-capture PaymentIntent with the order metadata', async () => {
    const intent = await createIntent(stripe, {
      amount: 5_000,
      currency: 'eur',
      metadata: { orderId, cellId: 'cell-1', eventId: '0c8a6f0e-2222-4333-8444-555566667777' },
    });
    expect(intent.object).toBe('payment_intent');
  });

  it('captures, cancels and refunds with their keys', async () => {
    expect((await captureIntent(stripe, 'pi_123', orderId)).object).toBe('payment_intent');
    expect((await cancelIntent(stripe, 'pi_123', orderId)).object).toBe('payment_intent');
    const refund = await refundIntent(stripe, { paymentIntentId: 'pi_123', orderId, cellId: 'cell-1', amount: 5_000 });
    expect(refund.object).toBe('refund');
  });

  it('reads intents and refunds back (webhook re-fetch, reconciliation)', async () => {
    expect((await retrieveIntent(stripe, 'pi_123')).object).toBe('payment_intent');
    expect((await latestRefund(stripe, 'pi_123'))?.object).toBe('refund');
    expect((await findIntentForOrder(stripe, orderId))?.object).toBe('payment_intent');
  });
});
