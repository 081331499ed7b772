import { cellTopics } from '@onsale/contracts';
import { describe, expect } from 'vitest';
import { paymentsCellTest } from '../../test/support/fixtures';
import { eventually, readTopic } from '../../test/support/kafka';
import { orderStatus } from '../../test/support/saga';
import { intentsFor, payInBrowser } from '../../test/support/stripe';
import type { RetryPolicy } from '../src/messaging/consumer-runner';
import { PAYMENT_RETRY } from '../src/payments/role';

/** The payment worker's policy (a time budget, not an attempt count), on a test's clock: seconds, not a day. */
const outageRetry: RetryPolicy = {
  shortDelayMs: 200,
  shortAttempts: 2,
  longDelayMs: 300,
  longAttempts: 1,
  transientBudget: { ms: 60_000, maxLongDelayMs: 1_000 },
};

const it = paymentsCellTest({ prefix: 'out', seats: 20, paymentsRetry: outageRetry });

describe('Stripe down for a while', () => {
  it('the payment command waits the outage out on the retry topic, never dead-lettered; the order then pays and is ticketed', async ({
    cellId,
    cell,
    emulator,
    stripe,
    hold,
  }) => {
    expect(PAYMENT_RETRY.transientBudget?.ms).toBeGreaterThanOrEqual(24 * 3_600_000);
    const outageSeconds = 8;
    emulator.control.startOutage(outageSeconds);
    const outageEnds = Date.now() + outageSeconds * 1000;
    const { buyer, orderId } = await hold();

    // During the outage: no intent, the order still pending payment (its hold runs on, it is not extended).
    await new Promise((r) => setTimeout(r, 3_000));
    expect(intentsFor(emulator, orderId)).toEqual([]);
    expect(await orderStatus(cell, orderId)).toBe('pending_payment');

    const { paymentIntentId } = await payInBrowser(stripe, () => buyer.order(orderId), 'pm_card_visa', 30_000);
    expect(Date.now()).toBeGreaterThanOrEqual(outageEnds);
    await eventually(async () => (await orderStatus(cell, orderId)) === 'ticketed', 'ticketed');
    expect(intentsFor(emulator, orderId).map((i) => i.id)).toEqual([paymentIntentId]);

    // It was retried past the attempt count that dead-letters other consumers' failures, and never dead-lettered.
    const retries = (await readTopic(cellTopics(cellId).retryLong, 100, 3_000)).filter(
      (m) => m.key === orderId && m.headers['x-retry-consumer'] === 'payments',
    );
    const attempts = retries.map((m) => Number(m.headers['x-retry-attempt']));
    expect(Math.max(...attempts)).toBeGreaterThan(outageRetry.shortAttempts + outageRetry.longAttempts);
    const dead = (await readTopic(cellTopics(cellId).deadLetter, 100, 2_000)).filter((m) => m.key === orderId);
    expect(dead).toEqual([]);
  });
});
